'use strict';

// The optional weekly run for serverless.yml, read at package time (never deployed).
//
// SHOP_SCHEDULE unset or empty: the EventBridge rule is created DISABLED, with a placeholder
// expression, so the template has the same shape either way. SHOP_SCHEDULE set (for example
// "cron(0 9 ? * SAT *)", in UTC): the rule is ENABLED with that expression, and SHOP_CHANNEL and
// SHOP_REQUEST must be set too (a scheduled run has no person to ask and no text typed): packaging
// fails naming the one that is missing.

const PLACEHOLDER = 'cron(0 9 ? * SAT *)';

function schedule() {
  return (process.env.SHOP_SCHEDULE || '').trim();
}

module.exports = {
  rate() {
    const value = schedule();
    if (!value) return PLACEHOLDER;
    if (!/^(cron|rate)\(.+\)$/.test(value)) {
      throw new Error(
        `SHOP_SCHEDULE must be an EventBridge expression such as "cron(0 9 ? * SAT *)" or ` +
          `"rate(7 days)"; got ${JSON.stringify(value)}`
      );
    }
    const missing = ['SHOP_CHANNEL', 'SHOP_REQUEST'].filter(
      (name) => !(process.env[name] || '').trim()
    );
    if (missing.length) {
      throw new Error(
        `SHOP_SCHEDULE is set but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} ` +
          'empty: the weekly run needs a channel to post in and the week to ask for'
      );
    }
    return value;
  },
  enabled() {
    return schedule() !== '';
  },
};
