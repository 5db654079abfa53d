/** Names of the stack's tables and its data bucket, from the environment serverless.yml (or the local runtime) sets. */
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

/** The data bucket: files and uploads (`files/`), large cached answers (`cache/`), large stored responses (`responses/`). */
export function dataBucket(): string {
  return required('GATEWAY_BUCKET');
}
