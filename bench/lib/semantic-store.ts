/**
 * A DynamoDB emulator of its own with the stack's state table (as serverless.yml declares it), and
 * this process's store pointed at it: the semantic lookup stage fills a million items, which would
 * slow the emulator the gateway runs on, and it reads the emulator's CPU apart from its own.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { provisionResources } from '../../lib/local/template/provision';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { endpointEnv, resetClients } from '../../lib/store/clients';
import { repoRoot, startEmulators, type Service } from './services';

export interface SemanticStore {
  /** The emulators' process (DynamoDB, with SQS and S3 idle beside it). */
  service: Service;
  /** Stops the emulators, deletes their data and gives this process its environment back. */
  close(): Promise<void>;
}

const region = 'us-east-1';
const stateVariable = 'GATEWAY_STATE_TABLE';

export async function startSemanticStore(workDir: string): Promise<SemanticStore> {
  const dir = path.join(workDir, 'semantic-lookup');
  mkdirSync(dir, { recursive: true });
  const dataDir = path.join(dir, 'data');
  const { service, endpoints } = await startEmulators(dir, dataDir);
  const saved = { endpoint: process.env[endpointEnv.dynamodb], table: process.env[stateVariable], mode: process.env.GATEWAY_MODE };
  const restore = () => {
    setOrDelete(endpointEnv.dynamodb, saved.endpoint);
    setOrDelete(stateVariable, saved.table);
    setOrDelete('GATEWAY_MODE', saved.mode);
    resetClients();
  };
  try {
    process.env[endpointEnv.dynamodb] = endpoints.dynamodb;
    // As the local runtime runs the gateway: its outbound guard lets the lean DynamoDB client reach
    // the emulator on loopback, so the lookups take the path they take in Lambda.
    process.env.GATEWAY_MODE = 'local';
    resetClients();
    const config = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage: 'local', region });
    const { StateTable } = config.resources;
    if (!StateTable) throw new Error('serverless.yml declares no StateTable.');
    const provisioned = await provisionResources({ StateTable }, { region });
    process.env[stateVariable] = provisioned.ref('StateTable');
  } catch (error) {
    restore();
    await service.stop();
    throw error;
  }
  return {
    service,
    close: async () => {
      restore();
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function setOrDelete(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
