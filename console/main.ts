import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { getJson, keyRefused } from './api';
import { el, show } from './dom';
import { currentPlace, href } from './router';
import { forgetKey, savedKey, saveKey } from './key-store';
import { chartsView } from './views/charts';
import { requestsView } from './views/requests';
import { isResource, resourceDetail, resourceList, resources } from './views/resources';
import { traceView } from './views/trace';

const app = document.getElementById('app')!;

function signIn(message?: string): void {
  const key = el('input', { type: 'password', name: 'key', autocomplete: 'off', required: true, placeholder: 'gwk_…', 'aria-label': 'Gateway API key' });
  const status = el('p', { class: 'error' }, message ?? '');
  // POST, and handled here: the key must never end up in a URL, as a GET form would put it.
  const form = el(
    'form',
    { class: 'sign-in', method: 'post' },
    el('h1', {}, 'Gateway console'),
    el('label', {}, 'Gateway API key', key),
    el('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    saveKey(key.value.trim());
    try {
      await getJson('logs', { limit: '1' });
      render();
    } catch (error) {
      // A refused key has brought the form back already, with the gateway's message.
      if (!savedKey()) return;
      forgetKey();
      status.textContent = error instanceof Error ? error.message : String(error);
    }
  });
  show(app, form, el('p', { class: 'muted' }, 'The key stays in this tab (sessionStorage) and goes only to this gateway, with its API calls.'));
  key.focus();
}

function signOut(): void {
  forgetKey();
  signIn();
}

const nav = [['requests', 'Requests'], ['charts', 'Charts'], ...Object.entries(resources).map(([kind, { title }]) => [`catalog/${kind}`, title])] as const;

function render(): void {
  if (!savedKey()) return signIn();
  const place = currentPlace();
  const content = el('div', { class: 'content' });
  const here = place.view === 'catalog' ? `catalog/${place.args[0]}` : place.view;
  show(
    app,
    el(
      'header',
      {},
      el('strong', {}, 'Gateway console'),
      el('nav', {}, ...nav.map(([target, label]) => el('a', { href: `#/${target}`, class: target === here ? 'here' : undefined }, label))),
      el('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'),
    ),
    content,
  );
  void open(place.view, place.args, content).catch((error) => {
    if (!savedKey()) return;
    show(content, el('p', { class: 'error' }, error instanceof Error ? error.message : String(error)), el('a', { href: href('requests') }, 'Recent requests'));
  });
}

async function open(view: string, args: string[], content: HTMLElement): Promise<void> {
  if (view === 'trace' && args[0]) return traceView(content, args[0]);
  if (view === 'charts') return chartsView(content);
  if (view === 'catalog' && args[0] && isResource(args[0])) return args[1] ? resourceDetail(content, args[0], args[1]) : resourceList(content, args[0]);
  return requestsView(content);
}

window.addEventListener('hashchange', render);
window.addEventListener(keyRefused, (event) => signIn((event as CustomEvent<string>).detail));
render();
