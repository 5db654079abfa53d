import { GatewayError } from '../../core/errors';

export const providerName = 'bedrock';

/**
 * HTTP status of each Bedrock Runtime exception (lower-cased names: the HTTP header spells them
 * `ValidationException`, stream frames `validationException`), plus the IAM/signing errors AWS's
 * front end answers with.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
 */
const exceptionStatus: Record<string, number> = {
  validationexception: 400,
  servicequotaexceededexception: 400,
  accessdeniedexception: 403,
  unrecognizedclientexception: 403,
  invalidsignatureexception: 403,
  expiredtokenexception: 403,
  missingauthenticationtokenexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  throttlingexception: 429,
  modelnotreadyexception: 429,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

/** `ValidationException:http://internal.amazon.com/…` or `com.amazon.coral#ValidationException` → `ValidationException`. */
function exceptionName(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !raw) return undefined;
  const name = raw.split(':')[0].split('#').pop()!.trim();
  return name || undefined;
}

/**
 * A Bedrock error response (`{"message": …}`, the exception's name in the `x-amzn-ErrorType` header,
 * or `__type`/`code` in the body) in the gateway's error shape, keeping Bedrock's status and message.
 */
export function readBedrockError(status: number, body: Buffer, headers: Record<string, string>): GatewayError {
  const text = body.toString('utf8');
  let parsed: Record<string, unknown> | undefined;
  try {
    const value = JSON.parse(text);
    if (value && typeof value === 'object') parsed = value;
  } catch {
    // not JSON: the text is the message
  }
  const message =
    (typeof parsed?.message === 'string' && parsed.message) ||
    (typeof parsed?.Message === 'string' && parsed.Message) ||
    text.slice(0, 1000).trim() ||
    `Bedrock answered with status ${status}.`;
  const code = exceptionName(headers['x-amzn-errortype']) ?? exceptionName(parsed?.__type) ?? exceptionName(parsed?.code) ?? null;
  return new GatewayError(status, message, { code, provider: providerName });
}

/**
 * A ConverseStream exception frame (`:message-type: exception`) as the error that ends the client's
 * stream. Its status only names the kind of failure in the error event (the HTTP status went out
 * already): throttling 429, validation 400, and a model failure mid-stream 502 rather than
 * Bedrock's 424, which OpenAI clients do not know.
 */
export function streamException(exceptionType: string | undefined, payload: Buffer): GatewayError {
  let message: string | undefined;
  try {
    const parsed = JSON.parse(payload.toString('utf8'));
    if (typeof parsed?.message === 'string') message = parsed.message;
    if (typeof parsed?.originalMessage === 'string') message = `${message ?? 'The model failed'}: ${parsed.originalMessage}`;
  } catch {
    // a payload that is not JSON: fall back on the exception's name
  }
  const name = exceptionName(exceptionType) ?? 'unknownException';
  let status = exceptionStatus[name.toLowerCase()] ?? 502;
  if (status === 424) status = 502;
  return new GatewayError(status, message ?? `Bedrock ended the stream with ${name}.`, { code: name, provider: providerName });
}
