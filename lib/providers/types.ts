/** The three unified inference operations. */
export type Operation = 'chat' | 'completions' | 'embeddings';

/** Where an operation lives under a provider's base URL. */
export const operationPaths: Record<Operation, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
};

/**
 * How a provider wants its key: the header name and the prefix before the key
 * (`Authorization: Bearer <key>` for the OpenAI family).
 */
export interface AuthScheme {
  header: string;
  prefix: string;
}

/** A request body on its way to the provider (a parsed JSON object the adapter may adjust). */
export type JsonObject = Record<string, unknown>;
