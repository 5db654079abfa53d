import { getJson, segment } from '../api';
import { el, show } from '../dom';
import { time } from '../format';
import { href } from '../router';
import { json } from './trace';

/** The catalog and the saved objects the console shows: each a list and a detail, read only. */
export const resources = {
  providers: { title: 'Providers', path: 'providers' },
  configs: { title: 'Configs', path: 'configs' },
  prompts: { title: 'Prompts', path: 'prompts' },
  guardrails: { title: 'Guardrails', path: 'guardrails' },
  'rate-limits': { title: 'Rate-limit policies', path: 'policies/rate-limits' },
  'usage-limits': { title: 'Usage-limit policies', path: 'policies/usage-limits' },
} as const;

export type ResourceKind = keyof typeof resources;

export const isResource = (kind: string): kind is ResourceKind => Object.hasOwn(resources, kind);

/** What names an item in its detail path: a provider's slug, every other object's id. */
const idOf = (item: any): string => item.slug ?? item.id;

export async function resourceList(root: HTMLElement, kind: ResourceKind): Promise<void> {
  const { title, path } = resources[kind];
  show(root, el('h1', {}, title), el('p', { class: 'muted' }, 'Loading…'));
  const answer = await getJson<{ data: any[] }>(path, { limit: '100' });
  const items = answer.data;
  show(
    root,
    el('h1', {}, title),
    items.length === 0
      ? el('p', { class: 'muted' }, `No ${title.toLowerCase()} yet.`)
      : el(
          'table',
          { class: 'resources' },
          el('thead', {}, el('tr', {}, ...['Id', 'Name', 'Updated'].map((name) => el('th', {}, name)))),
          el(
            'tbody',
            {},
            ...items.map((item) =>
              el(
                'tr',
                {},
                el('td', { class: 'mono' }, el('a', { href: href('catalog', kind, idOf(item)) }, idOf(item))),
                el('td', {}, item.name ?? item.display_name ?? ''),
                el('td', {}, time(item.updated_at ?? item.created_at)),
              ),
            ),
          ),
        ),
  );
}

export async function resourceDetail(root: HTMLElement, kind: ResourceKind, id: string): Promise<void> {
  const { title, path } = resources[kind];
  show(root, el('p', { class: 'muted' }, 'Loading…'));
  const item = await getJson(`${path}/${segment(id)}`);
  show(root, el('p', {}, el('a', { href: href('catalog', kind) }, `← ${title}`)), el('h1', { class: 'mono' }, id), json(item));
}
