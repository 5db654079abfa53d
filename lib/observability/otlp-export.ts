import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { otlpJson, otlpProtobuf } from './otlp-encoding';
import type { OtlpSettings } from './otlp-settings';
import type { Span } from './request-spans';

/** Failures are reported at most this often: a collector that is down must not flood the log. */
const reportEveryMs = 60_000;
let lastReportAt = 0;

/**
 * Sends spans to the collector. Never rejects: telemetry that cannot be delivered is reported (at
 * most once a minute) and dropped, and the request it describes is long answered by then.
 */
export function exportSpans(spans: readonly Span[], settings: OtlpSettings): Promise<void> {
  const json = settings.protocol === 'http/json';
  const body = json ? Buffer.from(otlpJson(spans, settings.serviceName)) : otlpProtobuf(spans, settings.serviceName);
  const send = settings.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const call = send(settings.url, {
      method: 'POST',
      headers: { ...settings.headers, 'content-type': json ? 'application/json' : 'application/x-protobuf', 'content-length': String(body.length) },
      timeout: settings.timeoutMs,
    });
    call.on('response', (response) => {
      response.resume();
      response.on('end', () => {
        if ((response.statusCode ?? 0) >= 300) report(`the collector answered ${response.statusCode}`);
        resolve();
      });
      response.on('error', () => resolve());
    });
    call.on('timeout', () => call.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)));
    call.on('error', (error) => {
      report(error.message);
      resolve();
    });
    call.end(body);
  });
}

function report(why: string): void {
  const now = Date.now();
  if (now - lastReportAt < reportEveryMs) return;
  lastReportAt = now;
  console.warn(`OTLP export failed (${why}); spans are dropped until the collector answers.`);
}
