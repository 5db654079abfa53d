/** The request every scenario sends in its own shape, and the checks several scenarios share. */
import type { Env, SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';

/** Sent by every client as the provider key; the fakes accept any. */
export const PROVIDER_KEY = 'sk-bench-not-a-real-key';
export const JSON_HEADERS = { 'content-type': 'application/json' };

export const CHAT_BODY = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Hello there, please benchmark me.' },
  ],
};

export function chatBody(stream: boolean, model = CHAT_BODY.model): string {
  return JSON.stringify(stream ? { ...CHAT_BODY, model, stream: true } : { ...CHAT_BODY, model });
}

/** What every request to the gateway carries before it says where the request goes. */
export function gatewayHeaders(env: Env): Record<string, string> {
  return { ...JSON_HEADERS, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': env.memberKey };
}

/**
 * The OpenAI chat request as each system takes it. `upstreamBase` sends it to another fake than the
 * default one; the gateway is then told so with a custom host, as it otherwise uses the base URL it
 * was started with.
 */
export function openAiTarget(env: Env, system: SystemName, stream: boolean, upstreamBase?: string): HttpTarget {
  const base = upstreamBase ?? env.upstream.url;
  const body = chatBody(stream);
  const auth = { authorization: `Bearer ${PROVIDER_KEY}` };
  if (system === 'direct') return { url: `${base}/v1/chat/completions`, headers: { ...JSON_HEADERS, ...auth }, body };
  if (system === 'peer')
    return {
      url: `${env.peer.url}/chat/completions`,
      headers: { ...JSON_HEADERS, ...auth, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${base}/v1` },
      body,
    };
  const headers = { ...gatewayHeaders(env), 'x-gateway-provider': 'openai' };
  return { url: `${env.gateway.url}/chat/completions`, headers: upstreamBase ? { ...headers, 'x-gateway-custom-host': `${upstreamBase}/v1` } : headers, body };
}

/** The fakes answer `echo: …`, in the OpenAI shape or the Anthropic one; anything else was misrouted. */
export function echoProblem(text: string): string | undefined {
  const json = JSON.parse(text) as { choices?: { message?: { content?: string } }[]; content?: { text?: string }[] };
  const content = json.choices?.[0]?.message?.content ?? json.content?.[0]?.text ?? '';
  return content.startsWith('echo: ') ? undefined : "expected the fake upstream's echo answer";
}
