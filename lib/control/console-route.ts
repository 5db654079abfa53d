import type { RouteContext, RouteHandler } from '../http/pipeline';
import { staticFiles } from '../http/static-files';
import type { GatewayResponse } from '../http/types';

/**
 * The console's page and assets (docs/console.md). Public: the files hold nothing of a workspace;
 * the page asks for a gateway key and sends it with its own calls to the API.
 */
const types = new Map([
  ['index.html', 'text/html; charset=utf-8'],
  ['console.js', 'text/javascript; charset=utf-8'],
  ['console.css', 'text/css; charset=utf-8'],
]);

/**
 * Nothing inline, nothing from another origin, and the page never framed: a script injected through
 * data shown on the page could not run, and could not send a key anywhere but the gateway.
 */
export const consolePolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const headers = {
  'content-security-policy': consolePolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The names do not change with the contents: a browser asks again each time, cheaply.
  'cache-control': 'no-cache',
};

// The build puts the files in console/ beside the function's index.mjs.
const files = staticFiles(new URL('./console/', import.meta.url), types, headers);

const routes = [
  { method: 'GET', path: '/console' },
  { method: 'GET', path: '/console/{file}' },
] as const;

/**
 * The page loads its assets relative to `/console`; at `/console/` they would resolve one folder
 * too deep, so that address is sent to the page's own. Relative, as the stage prefix is unknown here.
 */
const toPage: GatewayResponse = { status: 308, headers: { ...headers, location: '../console' }, body: '' };

/** GET /console (the page) and GET /console/{file} (its script and stylesheet). */
export const consoleRoute: RouteHandler & { readonly routes: typeof routes } = Object.assign(
  async ({ request }: RouteContext) => {
    if (request.resource !== '/console') return files(request.pathParameters.file ?? '');
    return request.path.endsWith('/') ? toPage : files('index.html');
  },
  { isPublic: () => true, routes },
);
