/**
 * Views are named in the URL's fragment (`#/trace/<id>`): a link or a reload opens the same view,
 * and the fragment is never sent to a server. It names views only, never the key.
 */
export interface Place {
  view: string;
  args: string[];
}

export function currentPlace(): Place {
  const [view = 'requests', ...args] = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return { view, args };
}

export function href(view: string, ...args: string[]): string {
  return `#/${[view, ...args].map(encodeURIComponent).join('/')}`;
}

export function go(view: string, ...args: string[]): void {
  location.hash = href(view, ...args);
}
