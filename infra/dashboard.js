'use strict';

// The stack's CloudWatch dashboard (serverless.yml, WeeklyShopDashboard), built at package time
// (never deployed). Its body is a JSON string inside Fn::Sub, so ${AWS::Region} and ${HttpApi}
// are filled in by CloudFormation. How to read it: infra/README.md, "The dashboard".
//
// The household's numbers are the function's embedded metrics (namespace weekly-shop, dimension
// FunctionName; orders also by Destination); the rest are Lambda's, the HTTP API's, SQS's and
// EventBridge Scheduler's own.

const NAMESPACE = 'weekly-shop';
const DESTINATIONS = ['canvas', 'instacart', 'webhook', 'kroger'];

function graph(title, metrics, properties = {}) {
  return {
    type: 'metric',
    width: 12,
    height: 6,
    properties: {
      title,
      region: '${AWS::Region}',
      view: 'timeSeries',
      stacked: false,
      period: 300,
      stat: 'Sum',
      metrics,
      ...properties,
    },
  };
}

function body(names) {
  const fn = ['FunctionName', names.functionName];
  const ours = (metric, options) => [NAMESPACE, metric, ...fn, ...(options ? [options] : [])];
  const lambda = (metric, options) => ['AWS/Lambda', metric, ...fn, ...(options ? [options] : [])];
  const api = (metric, options) => [
    'AWS/ApiGateway',
    metric,
    'ApiId',
    '${HttpApi}',
    ...(options ? [options] : []),
  ];
  const queue = (name) => ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', name];
  const scheduler = (metric) => ['AWS/Scheduler', metric, 'ScheduleGroup', names.timerGroup];
  const widgets = [
    {
      type: 'text',
      width: 24,
      height: 2,
      properties: {
        markdown:
          `## weekly-shop: ${names.functionName}\n` +
          'Baskets, answers and orders first; then the model, retries, and the function, API, ' +
          'queues and timers. What each means: infra/README.md, "The dashboard".',
      },
    },
    graph('Baskets', [
      ours('BasketsStarted'),
      ours('BasketsApproved'),
      ours('BasketsRejected'),
      ours('BasketsChanged'),
      ours('BasketsExpired'),
    ]),
    graph('Feedback on baskets (Good basket, Not good)', [
      ours('BasketFeedbackGood'),
      ours('BasketFeedbackBad'),
    ]),
    graph(
      'Time from a basket posted to its answer (seconds)',
      [ours('AnswerSeconds', { stat: 'p50' }), ours('AnswerSeconds', { stat: 'p90' })],
      { stat: 'p50' }
    ),
    graph('Orders', [ours('OrdersPlaced'), ours('OrdersFailed'), ours('OrdersUnknown')]),
    graph(
      'Orders by destination',
      DESTINATIONS.flatMap((destination) =>
        ['OrdersPlaced', 'OrdersFailed', 'OrdersUnknown'].map((metric) => [
          NAMESPACE,
          metric,
          ...fn,
          'Destination',
          destination,
        ])
      )
    ),
    graph('Model tokens', [
      ours('ModelInputTokens'),
      ours('ModelCachedTokens'),
      ours('ModelOutputTokens'),
    ]),
    graph('Model cost, estimated (USD)', [ours('ModelCostUSD')]),
    graph('Retries and lost runs', [
      ours('SlackRetries'),
      ours('S3Retries'),
      ours('LostLazyRuns'),
    ]),
    graph('Lambda: invocations, errors, throttles', [
      lambda('Invocations'),
      lambda('Errors'),
      lambda('Throttles'),
    ]),
    graph(
      'Lambda: duration p99 (ms) and concurrent executions',
      [
        lambda('Duration', { stat: 'p99' }),
        lambda('ConcurrentExecutions', { stat: 'Maximum', yAxis: 'right' }),
      ],
      { stat: 'p99' }
    ),
    graph('HTTP API: requests, 4xx, 5xx', [api('Count'), api('4xx'), api('5xx')]),
    graph(
      'HTTP API: latency (ms)',
      [api('Latency', { stat: 'p50' }), api('Latency', { stat: 'p99' })],
      { stat: 'p99' }
    ),
    graph(
      'Queues: lost runs waiting, and dead',
      [queue(names.lostQueue), queue(names.deadQueue)],
      { stat: 'Maximum' }
    ),
    graph('Timers (EventBridge Scheduler)', [
      scheduler('InvocationAttemptCount'),
      scheduler('TargetErrorCount'),
      scheduler('InvocationDroppedCount'),
    ]),
  ];
  return JSON.stringify({ widgets });
}

module.exports = {
  async body({ resolveVariable }) {
    const service = await resolveVariable('self:service');
    const stage = await resolveVariable('sls:stage');
    return {
      'Fn::Sub': body({
        functionName: `${service}-${stage}-slack`,
        timerGroup: `${service}-${stage}-baskets`,
        lostQueue: `${service}-${stage}-lost-lazy-runs`,
        deadQueue: `${service}-${stage}-lost-lazy-runs-dead`,
      }),
    };
  },
};
