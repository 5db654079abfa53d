import { assertOperationSupported } from '../capabilities';
import { badRequest } from '../../core/errors';
import type { ChatRequest } from '../openai-format/types';
import type { PreparedCall, ProviderAdapter, ProviderCall } from '../types';
import { bedrockAuthHeaders } from './auth';
import { buildEmbeddingRequest, readEmbeddingResponse } from './embeddings';
import { readBedrockError } from './errors';
import { buildConverseRequest } from './request';
import { readConverseResponse } from './response';
import { converseStreamTransform } from './stream';
import { pathSegment } from '../path-segment';

/** ConverseStream's binary framing (not server-sent events). */
const eventStreamType = 'application/vnd.amazon.eventstream';

/**
 * The model id as ONE path segment: `:` and `/` of versioned ids, inference profiles and ARNs are
 * percent-encoded (plus `!'()*`, which encodeURIComponent keeps but AWS's SDKs encode), so
 * `arn:aws:bedrock:…:application-inference-profile/abc` stays one segment.
 */
export function modelPath(model: string, action: 'converse' | 'converse-stream' | 'invoke'): string {
  const segment = pathSegment(model, 'model', (value) =>
    encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`),
  );
  return `/model/${segment}/${action}`;
}

/**
 * Chat → Converse / ConverseStream, embeddings → InvokeModel (Titan, Cohere); text completions have
 * no Bedrock counterpart here and are a 400 pointing at chat.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_Operations_Amazon_Bedrock_Runtime.html
 */
export const bedrockAdapter: ProviderAdapter = {
  async prepare(call: ProviderCall): Promise<PreparedCall> {
    const model = call.body.model as string;
    assertOperationSupported(call);
    if (call.operation === 'embeddings') return prepareEmbeddings(call, model);

    const converse = await buildConverseRequest(call.body as ChatRequest, call.strictApiCompliance);
    const action = call.stream ? 'converse-stream' : 'converse';
    const context = { model, strict: call.strictApiCompliance, responseTool: converse.responseTool };
    const streamOptions = call.body.stream_options as { include_usage?: boolean } | undefined;
    return {
      ...(await signedPost(call, modelPath(model, action), converse.request, call.stream ? eventStreamType : 'application/json')),
      readResponse: (bytes) => readConverseResponse(bytes, context),
      streamTransform: (onUsage) => converseStreamTransform({ ...context, includeUsage: streamOptions?.include_usage === true, onUsage }),
      streamContentType: eventStreamType,
    };
  },
  authenticate: (request, target) => bedrockAuthHeaders(request, target.settings),
};

async function prepareEmbeddings(call: ProviderCall, model: string): Promise<PreparedCall> {
  const { family, request } = buildEmbeddingRequest(call.body);
  const context = { family, model, base64: call.body.encoding_format === 'base64', inputCount: 'texts' in request ? request.texts.length : 1 };
  return {
    ...(await signedPost(call, modelPath(model, 'invoke'), request, 'application/json')),
    readResponse: (bytes) => readEmbeddingResponse(bytes, context),
    streamTransform() {
      throw badRequest('Embeddings cannot be streamed.', 'stream', 'invalid_type');
    },
  };
}

/**
 * A JSON POST to the target's base URL + `path`, with the auth headers (signed over these very
 * bytes), and how to read Bedrock's errors.
 */
async function signedPost(
  call: ProviderCall,
  path: string,
  payload: object,
  accept: string,
): Promise<Pick<PreparedCall, 'url' | 'headers' | 'body' | 'readError'>> {
  const url = new URL(call.target.baseUrl + path);
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { ...call.forwardHeaders, 'content-type': 'application/json', accept };
  Object.assign(headers, await bedrockAuthHeaders({ method: 'POST', url, headers, body: Buffer.from(body) }, call.target.settings));
  return { url, headers, body, readError: readBedrockError };
}
