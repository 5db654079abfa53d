/** Names of the stack's tables, from the environment serverless.yml (or the local runtime) sets. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; the gateway's functions get it from serverless.yml's provider.environment.`);
  return value;
}

export const tables = {
  get control() {
    return required('GATEWAY_CONTROL_TABLE');
  },
  get state() {
    return required('GATEWAY_STATE_TABLE');
  },
  get logs() {
    return required('GATEWAY_LOGS_TABLE');
  },
};
