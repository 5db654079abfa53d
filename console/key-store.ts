/**
 * The gateway key, for this tab only: kept in sessionStorage (gone when the tab closes), never in
 * localStorage, a cookie or the URL, where it would outlive the tab or leak in a link.
 */
const slot = 'gateway-console-key';

export function savedKey(): string | null {
  return sessionStorage.getItem(slot);
}

export function saveKey(key: string): void {
  sessionStorage.setItem(slot, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(slot);
}
