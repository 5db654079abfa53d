/**
 * A conditional update of a control-table item that moves through states (a batch, a fine-tuning
 * job): set, set-if-absent and remove attributes, only while the item exists and is in one of the
 * states `from` names. Of two workers making the same move, one makes it.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { tables } from './tables';

export interface StateUpdate<Item, Status extends string> {
  set?: Partial<Item>;
  /** Attributes to remove (sealed credentials once the work ends). */
  remove?: (keyof Item)[];
  /** Set each of these only when the item does not have it yet. */
  setIfAbsent?: Partial<Item>;
  /** The update is made only while the item's `status` is one of these. */
  from?: readonly Status[];
}

/** The item's attributes after the update, or undefined when it is gone or not in a state of `from`. */
export async function updateStateItem<Item, Status extends string>(
  key: { pk: string; sk: string },
  update: StateUpdate<Item, Status>,
): Promise<Record<string, unknown> | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  let n = 0;
  const add = (entries: [string, unknown][], expression: (name: string, value: string) => string) => {
    for (const [name, value] of entries) {
      if (value === undefined) continue;
      names[`#a${n}`] = name;
      values[`:v${n}`] = value;
      sets.push(expression(`#a${n}`, `:v${n}`));
      n++;
    }
  };
  add(Object.entries(update.set ?? {}), (name, value) => `${name} = ${value}`);
  add(Object.entries(update.setIfAbsent ?? {}), (name, value) => `${name} = if_not_exists(${name}, ${value})`);
  const removes = (update.remove ?? []).map((name) => {
    names[`#a${n}`] = String(name);
    return `#a${n++}`;
  });
  let condition = 'attribute_exists(pk)';
  if (update.from) {
    names['#status'] = 'status';
    const options = update.from.map((status, index) => {
      values[`:from${index}`] = status;
      return `:from${index}`;
    });
    condition += ` AND #status IN (${options.join(', ')})`;
  }
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  let result: Record<string, unknown> | undefined;
  const written = await writeIfCondition(async () => {
    const answer = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: tables.control,
        Key: marshall(key),
        UpdateExpression: expression,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: Object.keys(values).length ? marshall(values, { removeUndefinedValues: true }) : undefined,
        ReturnValues: 'ALL_NEW',
      }),
    );
    result = answer.Attributes ? unmarshall(answer.Attributes) : undefined;
  });
  return written ? result : undefined;
}
