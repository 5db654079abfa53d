import { emfLine, emfMetricsOn } from './emf-metrics';
import { exportSpans } from './otlp-export';
import { otlpSettings } from './otlp-settings';
import type { RequestRecorder } from './request-recorder';
import { requestSpans, spanParent } from './request-spans';

let reporting: { settings: ReturnType<typeof otlpSettings>; metrics: boolean } | undefined;

/**
 * What the gateway tells the outside about a request once it is finished, when the deployment asks
 * for it: its spans to an OTLP collector (OTEL_EXPORTER_OTLP_* variables) and, on Lambda, its
 * metrics as an embedded-metric-format log line. Both start after the answer is complete; the
 * export is handed to `waitUntil`, so it never delays an answer.
 */
export function reportRequest(recorder: RequestRecorder, headers: Record<string, string>, waitUntil: (work: Promise<unknown>) => void): void {
  // The deployment's variables are read once: they do not change while a process lives.
  reporting ??= { settings: otlpSettings(), metrics: emfMetricsOn() };
  const { settings, metrics } = reporting;
  if (!settings && !metrics) return;
  recorder.onFinish((record) => {
    if (metrics) {
      const line = emfLine(record);
      if (line) process.stdout.write(`${line}\n`);
    }
    if (settings) {
      const spans = requestSpans(record, recorder.attemptTimings(), spanParent(headers, record.trace_id), recorder.startedAtMs);
      waitUntil(exportSpans(spans, settings));
    }
  });
}
