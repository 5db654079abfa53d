/**
 * What the function bundles get instead of `@aws-sdk/credential-provider-node`, the SDK's default
 * credential chain (scripts/build-lib.mjs aliases that package to this file for them, and only for
 * them). On Lambda the function role's credentials are always in the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), the chain's first link; its other
 * links (profile files, SSO, credential processes, web identity, container and instance metadata,
 * with the STS and SSO clients they call and those clients' protocol code) never run there, yet
 * they were ~135 KB of every bundle that creates an SDK client. Locally the bundles talk to
 * emulators with static credentials (lib/store/clients.ts). The local runtime and
 * scripts/bootstrap.ts, which a deployer runs with a profile or SSO, leave npm packages external
 * and so keep the whole chain (docs/decisions.md, Performance).
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

/** The chain's `defaultProvider`, as the SDK clients call it: once per client, with its config. */
export function defaultProvider(init?: FromEnvInit): ReturnType<typeof fromEnv> {
  const read = fromEnv(init);
  let credentials: ReturnType<typeof read> | undefined;
  // The chain read once per client too: the environment of a running function does not change, so
  // reading it again (for an expiry or a forced refresh) could only find the same values. A failed
  // read is not kept: a later request reads again.
  return () =>
    (credentials ??= read().catch((error: unknown) => {
      credentials = undefined;
      throw new Error(
        'No AWS credentials in the environment: function bundles read them only from AWS_ACCESS_KEY_ID, ' +
          'AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, as Lambda sets them.',
        { cause: error },
      );
    }));
}
