/**
 * A prompt version rendered into a chat-completions body: the template's messages with the
 * variables filled in, the saved model, tools and hyperparameters, and the hyperparameters the call
 * passed at the root of its body over the saved ones.
 */
import { badRequest } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { checkPartialChains, loadIncludedPartials } from './partial-includes';
import type { SavedTemplate } from './saved-prompts';
import { parseTemplate, renderMessages, templatePartialNames } from './template';

export interface RenderInput {
  variables: Record<string, unknown>;
  /** Everything else at the root of the body: chat-completion parameters over the saved ones. */
  hyperparameters: Record<string, unknown>;
}

/** Fields a caller may not pass at the root: the template owns them. */
const templateOwned = new Set(['messages', 'prompt']);

/**
 * Reads `{variables, …hyperparameters}`, the body of both render and run. The prompt's id, which
 * Portkey's SDK repeats in the body (`promptID`), is the path's and never a hyperparameter.
 */
export function readRenderInput(body: Record<string, unknown>): RenderInput {
  const { variables = {}, promptID: _promptID, prompt_id: _promptId, ...hyperparameters } = body;
  if (Object.hasOwn(hyperparameters, 'hyperparameters')) {
    throw badRequest(
      'Hyperparameters go at the root of the body, next to "variables" (for example {"variables": {"topic": "tides"}, "temperature": 0.2, "max_tokens": 200}), not under a "hyperparameters" key.',
      'hyperparameters',
      'invalid_prompt_body',
    );
  }
  if (!isPlainObject(variables))
    throw badRequest('variables must be an object of the values the template uses, for example {"topic": "tides"}.', 'variables', 'invalid_prompt_body');
  for (const field of templateOwned) {
    if (Object.hasOwn(hyperparameters, field)) {
      throw badRequest(`${field} comes from the prompt's template; pass the values it uses in "variables" instead.`, field, 'invalid_prompt_body');
    }
  }
  return { variables, hyperparameters };
}

/** Saved fields that go into the body as they are, when set. */
const bodyFields = ['tools', 'tool_choice', 'functions'] as const;

/**
 * The chat-completions body a prompt version renders to (no provider is contacted). `fresh` reads
 * partials from the store rather than the run path's short cache, so a render shows a publish at once.
 */
export async function renderPrompt(
  workspaceId: string,
  prompt: SavedTemplate,
  input: RenderInput,
  options: { fresh?: boolean } = {},
): Promise<Record<string, unknown>> {
  const { fields } = prompt;
  const template = parseTemplate(String(fields.string ?? ''));
  const roots = templatePartialNames(template);
  const included = await loadIncludedPartials(workspaceId, roots, options);
  checkPartialChains(roots, included);
  const messages = renderMessages(template, input.variables, included.texts);
  const body: Record<string, unknown> = { ...(isPlainObject(fields.parameters) ? fields.parameters : {}) };
  if (typeof fields.model === 'string') body.model = fields.model;
  body.messages = messages;
  for (const field of bodyFields) if (fields[field] !== undefined && fields[field] !== null) body[field] = fields[field];
  Object.assign(body, input.hyperparameters);
  return body;
}
