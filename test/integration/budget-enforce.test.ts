/**
 * Budget checks and counts against the shared gateway's state table, run in this process: the
 * functions the `budgets` steps call.
 */
import { randomBytes } from 'node:crypto';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { BudgetExceededError, countSpend, enforceBudgets } from '../../lib/budgets/enforce';
import type { ActiveBudget } from '../../lib/budgets/policies';
import { dynamoClient, resetClients } from '../../lib/store/clients';
import { dynamoCounters } from '../../lib/store/counters';
import { usageCounterKey } from '../../lib/store/keys';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';

connectToGatewayStore();
beforeAll(() => {
  process.env.GATEWAY_STATE_TABLE = stateTable;
  resetClients();
});

const budget = (fields: Partial<ActiveBudget> = {}): ActiveBudget => ({
  id: `b-${randomBytes(6).toString('hex')}`,
  workspaceId: 'ws_enforce',
  type: 'tokens',
  creditLimit: 100,
  conditions: [{ key: 'metadata.team', value: '*' }],
  groupKeys: ['metadata.team'],
  reset: { created_at: 0 },
  ...fields,
});

const team = (name: string) => (key: string) => (key === 'metadata.team' ? name : undefined);

async function counterTotal(slot: { policyId: string; periodStart: number; bucket: string }): Promise<number> {
  const { Item } = await dynamoClient().send(
    new GetItemCommand({ TableName: stateTable, Key: marshall(usageCounterKey.item(slot.policyId, slot.periodStart, slot.bucket)), ConsistentRead: true }),
  );
  return Number(Item?.n?.N ?? 0);
}

/** Sets a bucket's usage as another container's writes would have left it. */
async function setUsage(slot: { policyId: string; periodStart: number; bucket: string }, n: number): Promise<void> {
  await dynamoClient().send(
    new PutItemCommand({ TableName: stateTable, Item: marshall({ ...usageCounterKey.item(slot.policyId, slot.periodStart, slot.bucket), n }) }),
  );
}

describe('enforceBudgets and countSpend', () => {
  it('admits a bucket with usage left, counts the spend, and refuses once it is used up', async () => {
    const b = budget();
    const [slot] = await enforceBudgets(dynamoCounters, [b], team('red'));
    expect(slot!.slot.group).toEqual({ 'metadata.team': 'red' });
    await countSpend(dynamoCounters, [slot!], { tokens: 60, cost: null });
    await enforceBudgets(dynamoCounters, [b], team('red'));
    await countSpend(dynamoCounters, [slot!], { tokens: 40, cost: null });
    await expect(enforceBudgets(dynamoCounters, [b], team('red'))).rejects.toBeInstanceOf(BudgetExceededError);
    // Another bucket of the same budget is its own.
    expect(await enforceBudgets(dynamoCounters, [b], team('blue'))).toHaveLength(1);
  });

  it('remembers a spent bucket without reading it again, until the limit is raised', async () => {
    const b = budget({ creditLimit: 10 });
    const [slot] = await enforceBudgets(dynamoCounters, [b], team('green'));
    await setUsage(slot!.slot, 10);
    await expect(enforceBudgets(dynamoCounters, [b], team('green'))).rejects.toBeInstanceOf(BudgetExceededError);
    // Usage only grows within a period, so a spent bucket stays spent: even a counter rewritten
    // lower (which the gateway never does) is not read again.
    await setUsage(slot!.slot, 0);
    await expect(enforceBudgets(dynamoCounters, [b], team('green'))).rejects.toBeInstanceOf(BudgetExceededError);
    // A raised limit is another question, read afresh.
    expect(await enforceBudgets(dynamoCounters, [{ ...b, creditLimit: 20 }], team('green'))).toHaveLength(1);
  });

  it('knows a bucket its own count used up is spent', async () => {
    const b = budget({ creditLimit: 5 });
    const [slot] = await enforceBudgets(dynamoCounters, [b], team('amber'));
    await countSpend(dynamoCounters, [slot!], { tokens: 5, cost: null });
    await setUsage(slot!.slot, 0);
    await expect(enforceBudgets(dynamoCounters, [b], team('amber'))).rejects.toBeInstanceOf(BudgetExceededError);
  });

  it('counts reservations under way, settles them with the spend, and releases what a refused request reserved', async () => {
    const b = budget({ creditLimit: 100 });
    const [first] = await enforceBudgets(dynamoCounters, [b], team('teal'), () => 60);
    // Usage is 0, but 60 is reserved: a second request still finds the bucket below the limit, a third does not.
    const [second] = await enforceBudgets(dynamoCounters, [b], team('teal'), () => 60);
    const refused = enforceBudgets(dynamoCounters, [b], team('teal'), () => 60);
    await expect(refused).rejects.toThrow('requests under way');
    await countSpend(dynamoCounters, [first!], { tokens: 15, cost: null });
    await countSpend(dynamoCounters, [second!], { tokens: 0, cost: null });
    expect(await counterTotal(first!.slot)).toBe(15);

    // A request two budgets select, refused by the second, leaves nothing reserved on the first.
    const spent = budget({ creditLimit: 10 });
    const [spentSlot] = await enforceBudgets(dynamoCounters, [spent], team('teal'));
    await setUsage(spentSlot!.slot, 10);
    await expect(enforceBudgets(dynamoCounters, [b, spent], team('teal'), () => 60)).rejects.toThrow('has been used up');
    expect(await counterTotal(first!.slot)).toBe(15);
  });

  it('passes a request no budget selects, with no bucket to count', async () => {
    const b = budget({ conditions: [{ key: 'metadata.team', value: 'only-this' }] });
    expect(await enforceBudgets(dynamoCounters, [b], team('other'))).toEqual([]);
  });
});
