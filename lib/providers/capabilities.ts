import { badRequest } from '../core/errors';
import type { Operation, ProviderCall } from './types';

/**
 * The operations of the chat-completions family: what an OpenAI-compatible provider takes (the
 * provider judges the model). `responses` is declared only by the providers that run OpenAI's
 * Responses API themselves, `messages` only by Anthropic; every other provider gets them translated
 * to chat.
 */
export const allOperations: readonly Operation[] = ['chat', 'completions', 'embeddings'];

const refusals: Record<Operation, (provider: string) => string> = {
  chat: (provider) => `Chat completions (/v1/chat/completions) are not supported by ${provider}.`,
  completions: (provider) => `Text completions (/v1/completions) are not supported by ${provider}; use /v1/chat/completions.`,
  embeddings: (provider) => `Embeddings are not supported by ${provider} (/v1/embeddings); use a provider with embedding models.`,
  responses: (provider) => `The Responses API (/v1/responses) is not run natively by ${provider}.`,
  messages: (provider) => `Anthropic's Messages API (/v1/messages) is not run natively by ${provider}.`,
};

/** The operations of OpenAI's API, which the OpenAI-family adapters map to paths of their own. */
export type OpenAIOperation = Exclude<Operation, 'messages'>;

/**
 * The call's operation for an adapter of the OpenAI family: `messages` reaches one only if its
 * provider declared it, and none does, so it is refused as any undeclared operation is.
 */
export function openAIOperation(call: ProviderCall): OpenAIOperation {
  if (call.operation === 'messages') throw badRequest(refusals.messages(call.target.provider.name), null, 'unsupported_operation');
  return call.operation;
}

/**
 * Refuses a call for an operation its provider does not declare (`ProviderDefinition.operations`),
 * with the one 400 `unsupported_operation` every provider answers. Adapters call it first, so a
 * synchronous adapter throws and an asynchronous one rejects, as for any other refusal of theirs.
 */
export function assertOperationSupported(call: ProviderCall): void {
  const { provider } = call.target;
  if (!provider.operations.includes(call.operation)) throw badRequest(refusals[call.operation](provider.name), null, 'unsupported_operation');
}
