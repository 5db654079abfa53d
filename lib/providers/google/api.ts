/**
 * The Gemini `generateContent` wire format (camelCase JSON), shared by the Gemini API and Vertex AI.
 * Only what the gateway writes or reads is typed; unknown fields pass through untouched.
 * @see https://ai.google.dev/api/generate-content
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent
 */

export interface GeminiPart {
  text?: string;
  /** A thought summary rather than answer text (thinking models, with `includeThoughts`). */
  thought?: boolean;
  /** Opaque; must be sent back on the same part in later turns (Gemini 2.5+/3 function calls). */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** Standard JSON Schema (the OpenAPI-subset `parameters` is not used by the gateway). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

export type GeminiFunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: GeminiFunctionCallingMode; allowedFunctionNames?: string[] } };
  safetySettings?: unknown[];
  generationConfig?: GeminiGenerationConfig;
  cachedContent?: string;
  labels?: Record<string, string>;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  finishMessage?: string;
  index?: number;
}

export interface GenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** Google's error body (`google.rpc.Status` in JSON). */
export interface GoogleErrorBody {
  error: { code?: number; message?: string; status?: string; details?: unknown[] };
}

/** @see https://ai.google.dev/api/embeddings#method:-models.batchembedcontents */
export interface BatchEmbedContentsRequest {
  requests: Array<{ model: string; content: { parts: Array<{ text: string }> }; outputDimensionality?: number; taskType?: string }>;
}

export interface BatchEmbedContentsResponse {
  embeddings?: Array<{ values?: number[] }>;
}
