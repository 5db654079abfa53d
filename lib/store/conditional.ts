/**
 * DynamoDB's answer to a write whose condition did not hold (`ConditionalCheckFailedException`):
 * the one place that knows its name, for every "create if absent", "claim if free" and "update if
 * unchanged" of the store.
 */
function isConditionFailed(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

/** Runs a conditional write: true when it was written, false when its condition did not hold. */
export async function writeIfCondition(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailed(error)) return false;
    throw error;
  }
}
