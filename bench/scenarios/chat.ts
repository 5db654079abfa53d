/** Chat completions, one JSON answer: the path every system serves, so all three are compared. */
import { openAiTarget, echoProblem } from './requests';
import type { Scenario } from './scenario';

export const chat: Scenario = {
  kind: 'chat',
  label: 'chat',
  systems: ['direct', 'ours', 'peer'],
  connections: (quick) => (quick ? [1, 50] : [1, 10, 50]),
  warmUp: 'every system',
  upstream: (env) => env.upstream.service,
  target: (env, system) => openAiTarget(env, system, false),
  check: ({ text }) => echoProblem(text),
};
