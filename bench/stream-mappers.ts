/**
 * Stream translation throughput of the native adapters' stream mappers, in-process: a provider
 * stream is replayed through the mapper many times; reports OpenAI chunks per second and the time
 * from the first provider bytes to the first OpenAI chunk.
 *
 * The streams are the provider recordings kept beside the repository (`../shared/fixtures/providers`,
 * see test/support/recordings.ts): third-party data read at run time, never copied in. Without them
 * the benchmark says so in one line and exits 0.
 *
 * Run: npm run bench:streams
 */
import type { Transform } from 'node:stream';
import { anthropicStreamTransform } from '../lib/providers/anthropic/stream';
import { converseStreamTransform } from '../lib/providers/bedrock/stream';
import { readRecordingBytes, recordingsDir, recordingsPresent } from '../test/support/recordings';

interface Case {
  name: string;
  bytes: Buffer;
  transform(): Transform;
}

if (!recordingsPresent) {
  console.log(`bench:streams: provider recordings not found at ${recordingsDir}; the Anthropic and Bedrock stream benchmarks are skipped`);
  process.exit(0);
}

const noUsage = () => undefined;
const cases: Case[] = [
  {
    name: 'anthropic (text, then a tool call)',
    bytes: readRecordingBytes('anthropic_stream_tool_use.sse'),
    transform: () => anthropicStreamTransform({ provider: 'anthropic', strictApiCompliance: true, model: 'claude', includeUsage: true, onUsage: noUsage }),
  },
  {
    name: 'bedrock (text, then a tool call)',
    bytes: readRecordingBytes('bedrock_converse_stream_tool_use.DERIVED.eventstream'),
    transform: () => converseStreamTransform({ model: 'anthropic.claude', includeUsage: true, strict: true, onUsage: noUsage }),
  },
];

/** Feeds the recorded bytes in reads of `readSize` and counts the OpenAI events out. */
function replay(entry: Case, readSize: number): { events: number; firstChunkMs: number } {
  const transform = entry.transform();
  let events = 0;
  let firstAt = 0;
  const started = performance.now();
  transform.on('data', (text: Buffer) => {
    if (events === 0) firstAt = performance.now();
    events += text.toString().split('\n\n').length - 1;
  });
  for (let offset = 0; offset < entry.bytes.length; offset += readSize) transform.write(entry.bytes.subarray(offset, offset + readSize));
  transform.end();
  return { events, firstChunkMs: firstAt - started };
}

for (const entry of cases) {
  for (let i = 0; i < 200; i++) replay(entry, 512);
  const runs = 3000;
  const firsts: number[] = [];
  let events = 0;
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    const result = replay(entry, 512);
    events += result.events;
    firsts.push(result.firstChunkMs);
  }
  const seconds = (performance.now() - started) / 1000;
  firsts.sort((a, b) => a - b);
  console.log(
    `${entry.name}: ${Math.round(events / seconds)} OpenAI chunks/s (${Math.round(runs / seconds)} streams/s, ${events / runs} chunks each); ` +
      `first chunk after ${(firsts[runs / 2] * 1000).toFixed(1)} µs median, ${(firsts[Math.floor(runs * 0.99)] * 1000).toFixed(1)} µs p99`,
  );
}
