import { readFile } from 'node:fs/promises';
import { notFound } from '../core/errors';
import type { GatewayResponse } from './types';

/**
 * Files shipped beside a function's code, answered by name. Only the names listed are served, so a
 * path parameter can never reach another file; each is read once per container and kept.
 */
export function staticFiles(folder: URL, types: ReadonlyMap<string, string>, headers: Readonly<Record<string, string>>) {
  const read = new Map<string, Promise<Buffer>>();
  return async function answer(name: string): Promise<GatewayResponse> {
    const type = types.get(name);
    if (!type) throw notFound(`No file ${JSON.stringify(name.slice(0, 100))} here.`, 'file_not_found');
    let contents = read.get(name);
    if (!contents) {
      contents = readFile(new URL(name, folder));
      // A failed read is tried again by the next request rather than kept.
      contents.catch(() => read.delete(name));
      read.set(name, contents);
    }
    return { status: 200, headers: { ...headers, 'content-type': type }, body: await contents };
  };
}
