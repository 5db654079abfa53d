import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPlainObject } from '../../core/plain-object';
import type { CheckInput, CheckOperation, CheckOutcome } from '../check-types';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { callForJson, callOutbound } from '../outbound-json';
import { headerParameter, optionalBoolean, optionalNumber, urlParameter } from '../parameters';

/**
 * Checks that call out: a webhook that judges (and may rewrite), a log endpoint, and URL validation.
 * Every call goes through the guarded outbound client; request headers are never sent on, since they
 * carry the caller's credentials.
 */

const timeoutParameter = (params: Record<string, unknown>) => optionalNumber(params, 'timeout', 3_000, { min: 1, max: 60_000, integer: true });

/** The peer gateway's names for the operations, which the endpoints written for it expect. */
const requestTypeNames: Record<CheckOperation, string> = {
  chat: 'chatComplete',
  completions: 'complete',
  embeddings: 'embed',
  responses: 'createModelResponse',
  messages: 'messages',
};

/** What a webhook or log endpoint receives: the shape configs written for the peer gateway expect. */
export function eventBody(input: CheckInput) {
  const onRequest = input.side === 'request';
  return {
    eventType: onRequest ? 'beforeRequestHook' : 'afterRequestHook',
    requestType: requestTypeNames[input.operation],
    request: { json: input.request, ...(onRequest ? { text: input.text } : {}) },
    ...(onRequest ? {} : { response: { json: input.response ?? null, text: input.text } }),
    metadata: input.metadata,
  };
}

export const webhook = defineCheck({
  id: 'default.webhook',
  mutator: true,
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['webhookURL', 'headers', 'timeout'],
  parse: (params) => ({ url: urlParameter(params, 'webhookURL'), headers: headerParameter(params), timeout: timeoutParameter(params) }),
  async run({ url, headers, timeout }, input) {
    const answer = await callForJson({
      what: `The webhook at ${url.host}`,
      url,
      method: 'POST',
      headers,
      body: eventBody(input),
      timeoutMs: timeout,
      signal: input.signal,
    });
    if (!isPlainObject(answer) || typeof answer.verdict !== 'boolean') throw new Error(`The webhook at ${url.host} answered without a boolean \`verdict\`.`);
    const outcome: CheckOutcome = {
      verdict: answer.verdict,
      data: {
        webhookURL: url.href,
        ...(answer.data !== undefined ? { responseData: answer.data } : {}),
        explanation: `The webhook's verdict is ${answer.verdict}.`,
      },
    };
    // A webhook rewrites the side it runs on: transformedData.request on the request, .response on the answer.
    const transformed = isPlainObject(answer.transformedData) ? answer.transformedData[input.side] : undefined;
    if (isPlainObject(transformed)) {
      if (isPlainObject(transformed.json)) outcome.transformedBody = transformed.json;
      if (typeof transformed.text === 'string') outcome.transformedText = transformed.text;
    }
    return outcome;
  },
});

export const log = defineCheck({
  id: 'default.log',
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['logURL', 'headers', 'timeout'],
  parse: (params) => ({ url: urlParameter(params, 'logURL'), headers: headerParameter(params), timeout: timeoutParameter(params) }),
  async run({ url, headers, timeout }, input) {
    const what = `The log endpoint at ${url.host}`;
    const answer = await callOutbound({ what, url, method: 'POST', headers, body: eventBody(input), timeoutMs: timeout, signal: input.signal });
    if (answer.status < 200 || answer.status > 299) throw new Error(`${what} answered with status ${answer.status}.`);
    return { verdict: true, data: { explanation: `Logged the event to ${url.host}.` } };
  },
});

/** The most URLs one text gets checked for; more are reported, not fetched. */
const maxUrlsChecked = 20;
const urlPattern = /https?:\/\/[^\s<>"'`{}[\]|\\^]+/g;
const trailingPunctuation = /[.,;:!?)]+$/;

export function findUrls(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(urlPattern)) found.add(match[0].replace(trailingPunctuation, ''));
  return [...found];
}

async function resolves(hostname: string, timeoutMs: number): Promise<boolean> {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      lookup(host).then(
        () => true,
        () => false,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reachable and answering below 400 (redirects are not followed: a 3xx counts as an answer). */
async function answers(url: URL, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ valid: boolean; reason?: string }> {
  try {
    let answer = await callOutbound({ what: `${url.host}`, url, method: 'HEAD', timeoutMs, signal });
    if (answer.status === 405 || answer.status === 501) answer = await callOutbound({ what: `${url.host}`, url, method: 'GET', timeoutMs, signal });
    return answer.status < 400 ? { valid: true } : { valid: false, reason: `status ${answer.status}` };
  } catch (error) {
    return { valid: false, reason: (error as Error).message };
  }
}

export const validUrls = defineCheck({
  id: 'default.validUrls',
  sides: ['request', 'response'],
  invertible: true,
  parameters: ['onlyDNS', 'timeout'],
  parse: (params) => ({ onlyDNS: optionalBoolean(params, 'onlyDNS', false), timeout: timeoutParameter(params) }),
  async run({ onlyDNS, timeout }, input) {
    const urls = findUrls(scannedText(input.text));
    if (urls.length === 0) return { verdict: true, data: { validUrls: [], invalidUrls: [], explanation: 'The text has no URLs.' } };
    const checked = urls.slice(0, maxUrlsChecked);
    const results = await Promise.all(
      checked.map(async (text) => {
        let url: URL;
        try {
          url = new URL(text);
        } catch {
          return { url: text, valid: false, reason: 'not a URL' };
        }
        if (onlyDNS) return { url: text, valid: await resolves(url.hostname, timeout), reason: 'the host name does not resolve' };
        return { url: text, ...(await answers(url, timeout, input.signal)) };
      }),
    );
    const invalid = results.filter((result) => !result.valid);
    return {
      verdict: invalid.length === 0,
      data: {
        method: onlyDNS ? 'dns' : 'http',
        validUrls: results.filter((result) => result.valid).map((result) => result.url),
        invalidUrls: invalid.map(({ url, reason }) => ({ url, reason })),
        ...(urls.length > checked.length ? { unchecked: urls.length - checked.length } : {}),
        explanation: invalid.length === 0 ? `All ${checked.length} URLs are valid.` : `${invalid.length} of ${checked.length} URLs are not valid.`,
      },
    };
  },
});
