import { resolveRequestPlan } from '../request-config';
import type { RequestStep } from '../run-inference';
import { targetResolver } from '../target';

/** `config`: the strategy tree the request follows (a saved config is read here), and its targets' resolver. */
export const resolveConfig: RequestStep = {
  name: 'config',
  async run(context, next) {
    const { options, caller } = context.request;
    const plan = await resolveRequestPlan(options.config, caller.workspaceId);
    context.plan = plan;
    context.targetOf = targetResolver(options.credentials, caller.workspaceId, plan.fromConfig);
    return next();
  },
};
