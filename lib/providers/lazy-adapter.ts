import type { ProviderAdapter } from './types';

/**
 * An adapter whose code loads on its provider's first call. Most functions serve one or two
 * providers, so the others' request and stream mappings stay out of the cold start; once loaded,
 * calls go straight to the adapter. A load that fails is tried again on the next call.
 */
export function lazyAdapter(load: () => Promise<ProviderAdapter>): ProviderAdapter {
  let adapter: ProviderAdapter | undefined;
  let loading: Promise<ProviderAdapter> | undefined;
  const loaded = () =>
    (loading ??= load().then(
      (done) => {
        adapter = done;
        return done;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  return {
    prepare: (call) => (adapter ? adapter.prepare(call) : loaded().then((done) => done.prepare(call))),
    authenticate: (request, target) => (adapter ? adapter.authenticate(request, target) : loaded().then((done) => done.authenticate(request, target))),
  };
}
