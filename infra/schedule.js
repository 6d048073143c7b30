'use strict';

// The optional weekly run for serverless.yml, read at package time (never deployed).
//
// SHOP_SCHEDULE unset or empty: the EventBridge rule is created DISABLED, with a placeholder
// expression, so the template has the same shape either way. SHOP_SCHEDULE set (for example
// "cron(0 9 ? * SAT *)", in UTC): the rule is ENABLED with that expression, and SHOP_CHANNEL must
// be set too, since a scheduled run has nobody to answer but a channel.

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
    if (!(process.env.SHOP_CHANNEL || '').trim()) {
      throw new Error('SHOP_SCHEDULE is set but SHOP_CHANNEL is empty: the run needs a channel');
    }
    return value;
  },
  enabled() {
    return schedule() !== '';
  },
};
