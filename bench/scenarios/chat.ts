/** Chat completions, one JSON answer: the path every system serves, so all three are compared. */
import { openAiTarget, echoProblem } from './requests';
import { onEverySystem, type Scenario } from './scenario';

export const chat: Scenario = {
  kind: 'chat',
  label: 'chat',
  ...onEverySystem,
  target: (env, system) => openAiTarget(env, system, false),
  check: ({ text }) => echoProblem(text),
};
