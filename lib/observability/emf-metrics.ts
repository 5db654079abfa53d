/**
 * Per-request metrics in CloudWatch's embedded metric format: one JSON log line that CloudWatch
 * turns into metrics (requests, errors, latency, tokens, cost per provider and model) with no API
 * call and no agent. Written for inference requests (those that reached a provider).
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */
import type { RequestLogRecord } from './request-log';

const countedMetrics = [
  { Name: 'requests', Unit: 'Count' },
  { Name: 'errors', Unit: 'Count' },
  { Name: 'latency', Unit: 'Milliseconds' },
  { Name: 'input_tokens', Unit: 'Count' },
  { Name: 'output_tokens', Unit: 'Count' },
];
const withCost = [...countedMetrics, { Name: 'cost_usd', Unit: 'None' }];

/** Whether this process writes them: on Lambda unless `GATEWAY_EMF_METRICS=off`; elsewhere only with `on`. */
export function emfMetricsOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const setting = env.GATEWAY_EMF_METRICS?.toLowerCase();
  return setting === 'on' || (Boolean(env.AWS_LAMBDA_FUNCTION_NAME) && setting !== 'off');
}

/** The metrics line of a finished request, or undefined for one that reached no provider. */
export function emfLine(record: RequestLogRecord, namespace = process.env.GATEWAY_METRICS_NAMESPACE || 'LLMGateway'): string | undefined {
  if (!record.provider) return undefined;
  // A cost the pricing table cannot give is left out rather than counted as 0.
  const priced = typeof record.cost === 'number';
  const line: Record<string, unknown> = {
    _aws: {
      Timestamp: Date.parse(record.created_at) || Date.now(),
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [['provider', 'model'], ['provider']], Metrics: priced ? withCost : countedMetrics }],
    },
    provider: record.provider,
    model: record.model ?? 'unknown',
    requests: 1,
    errors: record.status >= 400 ? 1 : 0,
    latency: record.latency_ms,
    input_tokens: record.usage?.prompt_tokens ?? 0,
    output_tokens: record.usage?.completion_tokens ?? 0,
  };
  if (priced) line.cost_usd = record.cost;
  return JSON.stringify(line);
}
