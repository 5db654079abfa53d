import { resolveRequestPlan } from '../request-config';
import type { RequestStep } from '../context';
import { targetResolver } from '../target';

/** `config`: the strategy tree the request follows (a saved config is read here), and its targets' resolver. */
export const resolveConfig: RequestStep = {
  name: 'config',
  run(context, next) {
    const { options, caller } = context.request;
    const { configs, catalog } = context.stores;
    return resolveRequestPlan(options.config, caller.workspaceId, configs).then((plan) => {
      context.plan = plan;
      context.targetOf = targetResolver(catalog, options.credentials, caller.workspaceId, plan);
      return next();
    });
  },
};
