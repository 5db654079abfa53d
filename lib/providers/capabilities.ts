import { badRequest } from '../core/errors';
import type { Operation, ProviderCall } from './types';

/**
 * The operations of the chat-completions family: what an OpenAI-compatible provider takes (the
 * provider judges the model). `responses` is declared only by the providers that run OpenAI's
 * Responses API themselves; every other provider gets it translated to chat.
 */
export const allOperations: readonly Operation[] = ['chat', 'completions', 'embeddings'];

const refusals: Record<Operation, (provider: string) => string> = {
  chat: (provider) => `Chat completions (/v1/chat/completions) are not supported by ${provider}.`,
  completions: (provider) => `Text completions (/v1/completions) are not supported by ${provider}; use /v1/chat/completions.`,
  embeddings: (provider) => `Embeddings are not supported by ${provider} (/v1/embeddings); use a provider with embedding models.`,
  responses: (provider) => `The Responses API (/v1/responses) is not run natively by ${provider}.`,
};

/**
 * Refuses a call for an operation its provider does not declare (`ProviderDefinition.operations`),
 * with the one 400 `unsupported_operation` every provider answers. Adapters call it first, so a
 * synchronous adapter throws and an asynchronous one rejects, as for any other refusal of theirs.
 */
export function assertOperationSupported(call: ProviderCall): void {
  const { provider } = call.target;
  if (!provider.operations.includes(call.operation)) throw badRequest(refusals[call.operation](provider.name), null, 'unsupported_operation');
}
