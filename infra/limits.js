'use strict';

// Numbers serverless.yml reads from the deploy's environment at package time (never deployed):
// each is a whole number within its range, or packaging fails naming the variable. Environment
// variables are strings, and the schema (configValidationMode: error) wants numbers.
//
//   RESERVED_CONCURRENCY  the function's reserved concurrency (default 10)
//   API_BURST_LIMIT       the HTTP API's default-route burst, in requests (default 20)
//   API_RATE_LIMIT        the HTTP API's default-route steady rate, per second (default 10)
//   MONTHLY_BUDGET_USD    the AWS Budget's monthly amount, in US dollars (default 20)
//   NONCURRENT_DAYS       days an overwritten or deleted object's old version is kept (default 30)

function number(name, fallback, low, high) {
  const raw = (process.env[name] || '').trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < low || Number(raw) > high) {
    throw new Error(`${name} must be a whole number from ${low} to ${high}; got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

module.exports = {
  reservedConcurrency: () => number('RESERVED_CONCURRENCY', 10, 1, 1000),
  apiBurstLimit: () => number('API_BURST_LIMIT', 20, 1, 5000),
  apiRateLimit: () => number('API_RATE_LIMIT', 10, 1, 10000),
  monthlyBudgetUsd: () => number('MONTHLY_BUDGET_USD', 20, 1, 100000),
  noncurrentDays: () => number('NONCURRENT_DAYS', 30, 1, 3650),
};
