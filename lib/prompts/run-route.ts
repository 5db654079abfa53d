import type { Readable } from 'node:stream';
import { readBody } from '../core/read-body';
import { readJsonObject } from '../http/json-body';
import type { RouteContext, RouteHandler } from '../http/pipeline';
import type { GatewayResponse } from '../http/types';
import { unifiedFromBody } from '../http/inference/from-http';
import type { UnifiedRequest } from '../inference/inference-request';
import { routedResponse } from '../http/inference/routed-response';
import { inferenceContext, runInference } from '../inference/run-inference';
import { commitStreamWhileRouting, streamCommitDelayMs } from '../http/inference/stream-commit';
import { readRenderInput, renderPrompt } from './render';
import { findPrompt, parseTemplateRef, promptNotFound, type SavedTemplate } from './saved-prompts';

/** A chat completion answered whole is far below this; it only bounds what is held to be wrapped. */
const maxAnswerBytes = 64 * 1024 * 1024;

/**
 * `POST /v1/prompts/{promptId}/completions`: renders the prompt with the body's variables and runs
 * the chat-completions body it makes through the same core as `/v1/chat/completions` (config,
 * hooks, routing, cache, retries, logs). A whole answer is wrapped as the spec's run response
 * `{status, headers, body}`; a streamed one is the chat completion stream itself; errors keep the
 * gateway's error shape and status.
 */
export const promptRunRoute: RouteHandler = async function promptRun(context: RouteContext): Promise<GatewayResponse> {
  const raw = context.request.pathParameters.promptId ?? '';
  const ref = parseTemplateRef(raw);
  if (!ref) throw promptNotFound(raw);
  const input = readRenderInput(readJsonObject(context.request));
  const prompt = await findPrompt(context.auth.workspaceId, ref);
  if (!prompt) throw promptNotFound(raw);
  context.recorder.prompted({ id: prompt.id, version: prompt.version });

  const body = await renderPrompt(context.auth.workspaceId, prompt, input);
  const request = withPromptDefaults(await unifiedFromBody('chat', body, context), prompt);
  const inference = inferenceContext(request, context);
  const routing = runInference(inference);
  if (request.stream) {
    const committed = await commitStreamWhileRouting(routing, inference, streamCommitDelayMs());
    if (committed) return committed;
  }
  const response = routedResponse(await routing, context.recorder);
  if (response.status < 200 || response.status >= 300 || request.stream) return response;
  return wrapped(response, context.trace.traceId);
};

/**
 * The prompt's saved provider stands where an `x-gateway-provider` header would: a request that
 * names its own provider (by header) keeps it, and a config's targets that name one keep theirs
 * (a default, so it never contradicts them as a header would).
 * The log's metadata names the prompt (`_prompt`), and so can conditional routing; rate-limit
 * policies on `prompt` see its id.
 */
function withPromptDefaults(request: UnifiedRequest, prompt: SavedTemplate): UnifiedRequest {
  const { credentials } = request.options;
  const saved = typeof prompt.fields.provider === 'string' ? prompt.fields.provider : undefined;
  const virtualKey = typeof prompt.fields.virtual_key === 'string' ? prompt.fields.virtual_key : undefined;
  const named = credentials.provider !== undefined || credentials.virtualKey !== undefined || credentials.customHost !== undefined;
  const fromPrompt = named ? undefined : saved ? { provider: saved } : virtualKey ? { virtualKey } : undefined;
  return {
    ...request,
    options: { ...request.options, credentials: fromPrompt ? { ...credentials, defaults: fromPrompt } : credentials },
    metadata: { ...request.metadata, _prompt: prompt.id },
    // Rate-limit policies on `prompt` match runs of this prompt.
    promptId: prompt.id,
  };
}

/** The spec's completions run response: the answer's `x-gateway-*` headers and the completion. */
async function wrapped(response: GatewayResponse, traceId: string): Promise<GatewayResponse> {
  const bytes =
    typeof response.body === 'string'
      ? Buffer.from(response.body)
      : Buffer.isBuffer(response.body)
        ? response.body
        : await readBody(response.body as Readable, maxAnswerBytes, 'the completion');
  const gatewayHeaders: Record<string, string> = { 'x-gateway-trace-id': traceId };
  for (const [name, value] of Object.entries(response.headers)) if (name.toLowerCase().startsWith('x-gateway-')) gatewayHeaders[name.toLowerCase()] = value;
  const text = `{"status":"success","headers":${JSON.stringify(gatewayHeaders)},"body":${bytes.toString('utf8')}}`;
  const headers: Record<string, string> = { ...response.headers, 'content-type': 'application/json' };
  delete headers['content-length'];
  return { status: response.status, headers, body: text };
}
