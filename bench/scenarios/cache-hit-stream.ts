/** The cache hit asked for as a stream: the gateway replays the stored answer as OpenAI events. */
import { cachedScenario, hitProblem } from './cache-hit';
import type { Scenario } from './scenario';
import { stream } from './stream';

export const cacheHitStream: Scenario = {
  kind: 'cache-hit-stream',
  label: 'cache hit stream',
  ...cachedScenario(true),
  baseline: stream,
  check: (response) => hitProblem(response) ?? replayProblem(response.text),
};

/** The replay must be a well-formed event stream carrying the echo answer and ending with [DONE]. */
function replayProblem(text: string): string | undefined {
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim());
  if (data.at(-1) !== '[DONE]') return 'expected the stream to end with data: [DONE]';
  let content = '';
  for (const event of data.slice(0, -1)) {
    try {
      const chunk = JSON.parse(event) as { object?: string; choices?: { delta?: { content?: string } }[] };
      if (chunk.object !== 'chat.completion.chunk') return `expected chat.completion.chunk events, got ${chunk.object}`;
      content += chunk.choices?.[0]?.delta?.content ?? '';
    } catch {
      return `an event is not JSON: ${event.slice(0, 80)}`;
    }
  }
  return content.startsWith('echo: ') ? undefined : "expected the fake upstream's echo answer in the replayed content";
}
