import type { Command } from 'commander';
import { printList } from '../io';
import { type Column, field } from '../table';
import {
  addDelete,
  addGet,
  bodyOf,
  collect,
  contextOf,
  number,
  pairs,
  positiveInteger,
  printWritten,
  requireFields,
  segment,
  wholeNumber,
  withBody,
} from './shared';

type Mode = 'create' | 'update';

/** Options only one of create and update takes: the route refuses the field in the other. */
const only = (mode: Mode, wanted: Mode, command: Command, add: (command: Command) => Command): Command => (mode === wanted ? add(command) : command);

interface PolicyKind {
  name: string;
  path: string;
  description: string;
  columns: Column[];
  /** The options of create or update, and the body fields they make. */
  options: (command: Command, mode: Mode) => Command;
  fields: (options: Record<string, any>) => Record<string, unknown>;
  required: string[];
  /** Options only a list takes, beyond status, type and paging. */
  listOptions?: (command: Command) => Command;
}

const conditionOptions = (command: Command): Command =>
  command
    .option('--condition <key=value>', 'a condition the requests must meet (repeat for more; all must hold), e.g. metadata.team=finance', collect)
    .option('--group-by <key>', 'count per value of this key (repeat for more), e.g. metadata._user', collect);

const conditionFields = (options: Record<string, any>) => ({
  conditions: options.condition ? pairs('--condition', options.condition) : undefined,
  group_by: options.groupBy ? (options.groupBy as string[]).map((key) => ({ key })) : undefined,
});

const rateLimits: PolicyKind = {
  name: 'rate-limits',
  path: '/policies/rate-limits',
  description: 'requests or tokens per minute, hour or day',
  columns: [field('id'), field('name'), field('type'), field('unit'), field('value'), field('status'), field('conditions'), field('group_by')],
  options: (command, mode) => {
    command.option('--name <name>', 'its name');
    only(mode, 'create', command, (create) => create.option('--type <type>', 'requests or tokens').option('--unit <unit>', 'rpm, rph or rpd'));
    command.option('--value <n>', 'how many per unit', positiveInteger('--value'));
    only(mode, 'update', command, (update) => update.option('--status <status>', 'active or archived'));
    return conditionOptions(command);
  },
  fields: (options) => ({
    name: options.name,
    type: options.type,
    unit: options.unit,
    value: options.value,
    status: options.status,
    ...conditionFields(options),
  }),
  required: ['type', 'unit', 'value', 'conditions', 'group_by'],
  listOptions: (command) => command.option('--unit <unit>', 'only this unit: rpm, rph or rpd'),
};

const usageLimits: PolicyKind = {
  name: 'usage-limits',
  path: '/policies/usage-limits',
  description: 'budgets: spend (USD) or tokens per period',
  columns: [
    field('id'),
    field('name'),
    field('type'),
    field('credit_limit', 'limit'),
    field('current_usage', 'used'),
    field('periodic_reset', 'reset'),
    field('status'),
    field('next_usage_reset_at', 'next_reset'),
  ],
  options: (command, mode) => {
    command.option('--name <name>', 'its name');
    only(mode, 'create', command, (create) => create.option('--type <type>', 'cost or tokens'));
    command
      .option('--credit-limit <n>', 'USD for cost, whole tokens for tokens', number('--credit-limit'))
      .option('--alert-threshold <n>', 'log an alert once usage crosses this', number('--alert-threshold'));
    only(mode, 'create', command, (create) =>
      create
        .option('--periodic-reset <period>', 'weekly or monthly (or neither: it never resets)')
        .option('--periodic-reset-days <n>', 'reset every n days', positiveInteger('--periodic-reset-days')),
    );
    only(mode, 'update', command, (update) => update.option('--status <status>', 'active or archived'));
    return conditionOptions(command);
  },
  fields: (options) => ({
    name: options.name,
    type: options.type,
    credit_limit: options.creditLimit,
    alert_threshold: options.alertThreshold,
    periodic_reset: options.periodicReset,
    periodic_reset_days: options.periodicResetDays,
    status: options.status,
    ...conditionFields(options),
  }),
  required: ['name', 'type', 'credit_limit', 'conditions', 'group_by'],
};

function policyCommand(policies: Command, kind: PolicyKind): void {
  const command = policies.command(kind.name).description(kind.description);
  const item = (id: string) => `${kind.path}/${segment(id)}`;

  const list = command
    .command('list')
    .description(`list ${kind.name} policies`)
    .option('--status <status>', 'active (default) or archived')
    .option('--type <type>', 'only this type')
    .option('--page-size <n>', 'policies per page', positiveInteger('--page-size'))
    .option('--page <n>', 'the page, counting from 0', wholeNumber('--page'));
  kind.listOptions?.(list);
  list.action(async (options, self: Command) => {
    const { client, output } = await contextOf(self);
    const answer = await client.request('GET', kind.path, {
      query: { status: options.status, type: options.type, unit: options.unit, page_size: options.pageSize, current_page: options.page },
    });
    printList(output, answer, kind.columns);
    if (!output.json && typeof answer.total === 'number' && answer.total > answer.data.length)
      output.err(`${answer.data.length} of ${answer.total}: see --page`);
  });

  addGet(command, { path: item, argument: 'policy-id', description: `show a ${kind.name} policy and its current usage` });

  withBody(kind.options(command.command('create').description(`create a ${kind.name} policy (admin)`), 'create')).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, kind.fields(options));
    requireFields(
      body,
      kind.required,
      `give ${kind.required.map((name) => `--${name.replace(/_/g, '-').replace('conditions', 'condition')}`).join(', ')} (or a body with them).`,
    );
    printWritten(context, await context.client.request('POST', kind.path, { body }));
  });

  withBody(
    kind.options(command.command('update').description(`change a ${kind.name} policy (admin); only the fields given change`).argument('<policy-id>'), 'update'),
  ).action(async (id: string, options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, kind.fields(options));
    printWritten(context, await context.client.request('PUT', item(id), { body }));
  });

  addDelete(command, { path: item, argument: 'policy-id', description: `archive a ${kind.name} policy (admin)`, done: 'Archived' });
}

export function policiesCommand(program: Command): void {
  const policies = program.command('policies').description('rate-limit and usage-limit (budget) policies');
  policyCommand(policies, rateLimits);
  policyCommand(policies, usageLimits);
}
