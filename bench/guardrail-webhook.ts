/**
 * What a `default.webhook` check adds to a request: the guardrails scenario's request with and
 * without an input hook that asks a local webhook (in this process, answering at once), one
 * request after another, interleaved, so the difference is the gateway's own cost of the call.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runner } from './runner';
import { guardrailsTarget } from './scenarios/guardrails';

export interface WebhookLatency {
  requests: number;
  p50WithoutMs: number;
  p50WithMs: number;
  addedP50Ms: number;
}

export async function measureWebhookLatency(runner: Runner, requests: number): Promise<WebhookLatency> {
  runner.log(`Guardrail webhook: ${requests} requests with and ${requests} without a webhook check, interleaved, c=1 …`);
  const webhook = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"verdict": true}'));
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  try {
    const base = guardrailsTarget(runner.env, 'ours');
    const config = JSON.parse(base.headers['x-gateway-config']!) as { before_request_hooks: { checks: unknown[] }[] };
    const url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/verdict`;
    config.before_request_hooks[0]!.checks.push({ id: 'default.webhook', parameters: { webhookURL: url, timeout: 2000 } });
    const withWebhook = { ...base, headers: { ...base.headers, 'x-gateway-config': JSON.stringify(config) } };
    const timings = { without: [] as number[], with: [] as number[] };
    for (let i = 0; i < requests * 2 + 20; i++) {
      const target = i % 2 === 0 ? base : withWebhook;
      const started = performance.now();
      const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`guardrail webhook stage: ${response.status} from the gateway`);
      // The first 20 warm both paths up.
      if (i >= 20) (target === base ? timings.without : timings.with).push(performance.now() - started);
    }
    const p50 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const [without, withHook] = [p50(timings.without), p50(timings.with)];
    return { requests, p50WithoutMs: without, p50WithMs: withHook, addedP50Ms: withHook - without };
  } finally {
    webhook.closeAllConnections();
    await new Promise<void>((resolve) => webhook.close(() => resolve()));
  }
}

export function webhookLatencyLine(result: WebhookLatency): string {
  const ms = (value: number) => value.toFixed(3);
  return `Guardrail webhook check (local webhook, c=1, ${result.requests} requests each): p50 ${ms(result.p50WithMs)} ms with it, ${ms(result.p50WithoutMs)} ms without: +${ms(result.addedP50Ms)} ms`;
}
