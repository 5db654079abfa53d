/**
 * The processes the benchmark starts and measures, started once per run: two fake OpenAI-compatible
 * upstreams, a fake Anthropic API, the emulators, the local gateway and the peer.
 */
import { setPriority } from 'node:os';
import path from 'node:path';
import { cpuSeconds, descendants, memory } from './lib/proc';
import { startEmulators, startFakeAnthropic, startFakeUpstream, startGateway, startPeer, type Service } from './lib/services';

/** Who answers a scenario's request: the upstream itself, the gateway, or the published peer. */
export type SystemName = 'direct' | 'ours' | 'peer';
export const SYSTEMS: readonly SystemName[] = ['direct', 'ours', 'peer'];

/** Content chunks in every default stream of the fake upstreams. */
export const STREAM_CHUNKS = 15;
export const ADMIN_KEY = 'gwk_bench_admin_key_for_the_local_benchmark_0001';

export interface Env {
  workDir: string;
  upstream: { service: Service; url: string };
  /** Writes one stream event per event-loop turn, so a first chunk can be told apart from the last. */
  paced: { service: Service; url: string };
  anthropic: { service: Service; url: string };
  emulators: { service: Service; endpoints: Record<string, string> };
  gateway: { service: Service; url: string };
  peer: { service: Service; url: string; version: string };
  /** Made at start through /v1/api-keys, so requests carry the kind of key a user's calls would. */
  memberKey: string;
}

/**
 * The niceness of the local stand-ins for what runs on other machines on AWS: the emulators
 * (DynamoDB, SQS, S3) and the log worker (CloudWatch Logs and the log-ingest function). Below the
 * gateway's priority they take the CPU the measured systems leave, as they would not share the
 * function's CPU when deployed; their CPU per request is still measured, after they have drained,
 * and shown beside the gateway's. `BENCH_STAND_IN_NICE=0` runs them at the gateway's priority.
 */
export const STAND_IN_NICE = Number(process.env.BENCH_STAND_IN_NICE ?? 19);

export async function startEnvironment(workDir: string, log: (line: string) => void): Promise<Env> {
  log('Starting the fake upstreams, the emulators and the peer …');
  const [upstream, paced, anthropic, emulators, peer] = await Promise.all([
    startFakeUpstream('fake-upstream', workDir, { chunks: STREAM_CHUNKS, burst: true }),
    startFakeUpstream('fake-upstream-paced', workDir, { chunks: STREAM_CHUNKS, burst: false }),
    startFakeAnthropic(workDir),
    startEmulators(workDir, path.join(workDir, 'emulators')),
    startPeer(workDir),
  ]);
  setPriority(emulators.service.pid!, STAND_IN_NICE);
  log('Starting the gateway …');
  const gateway = await startGateway(workDir, {
    GATEWAY_DATA_DIR: path.join(workDir, 'gateway'),
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: emulators.endpoints.sqs,
    GATEWAY_S3_ENDPOINT: emulators.endpoints.s3,
    // groq stands for an OpenAI-compatible provider without the Responses API (the responses scenario).
    GATEWAY_PROVIDER_BASE_URLS: JSON.stringify({ openai: `${upstream.url}/v1`, groq: `${upstream.url}/v1` }),
    GATEWAY_LOG_WORKER_NICE: String(STAND_IN_NICE),
  });
  const memberKey = await createMemberKey(gateway.url);
  return { workDir, upstream, paced, anthropic, emulators, gateway, peer, memberKey };
}

async function createMemberKey(gatewayUrl: string): Promise<string> {
  const response = await fetch(`${gatewayUrl}/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify({ name: 'benchmark', role: 'member' }),
  });
  const json = (await response.json()) as { key?: string };
  if (response.status !== 200 || !json.key) throw new Error(`creating the benchmark's gateway key failed: ${response.status} ${JSON.stringify(json)}`);
  return json.key;
}

/** Every process the benchmark started that is still meant to run (the load generator aside). */
export function allServices(env: Env): Service[] {
  return [env.upstream.service, env.paced.service, env.anthropic.service, env.emulators.service, env.gateway.service, env.peer.service];
}

/** The process behind a system other than `direct` (whose requests the upstream itself answers). */
export function systemProcess(env: Env, system: Exclude<SystemName, 'direct'>): Service {
  return system === 'ours' ? env.gateway.service : env.peer.service;
}

/** What each process holds at the end (VmHWM) and has spent, for the JSON report. */
export function processesAtEnd(env: Env) {
  const at = (service: Service) => ({
    pid: service.pid,
    hwmMb: memory(service.pid)?.hwmMb,
    cpuSeconds: cpuSeconds(service.pid),
    restarts: service.restarts,
    children: descendants(service.pid).map((child) => ({ pid: child, hwmMb: memory(child)?.hwmMb, cpuSeconds: cpuSeconds(child) })),
  });
  return {
    gateway: at(env.gateway.service),
    peer: at(env.peer.service),
    emulators: at(env.emulators.service),
    fakeUpstream: at(env.upstream.service),
    fakeUpstreamPaced: at(env.paced.service),
    fakeAnthropic: at(env.anthropic.service),
  };
}

export type Processes = ReturnType<typeof processesAtEnd>;

export async function stopEnvironment(env: Env): Promise<void> {
  await Promise.all(allServices(env).map((service) => service.stop()));
}
