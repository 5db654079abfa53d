/**
 * Every price the sizing and the cost table use, in one place. Region us-east-1 (US East, N.
 * Virginia), on-demand, no free tier, checked on the date below against the AWS pricing pages named
 * in `sources`. Change a price here and run `npm run size -- --write` to refill the README table.
 */
export const PRICES = {
  region: 'us-east-1',
  checked: '2026-11-27',
  /** Lambda, arm64: per GB-second of duration and per request. */
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  /** API Gateway REST API, first 333 million requests a month. */
  apiGatewayRestRequest: 3.5 / 1e6,
  /** DynamoDB on-demand, standard table class. */
  dynamoReadRequestUnit: 0.125 / 1e6,
  dynamoWriteRequestUnit: 0.625 / 1e6,
  /** CloudWatch Logs, standard log class, ingestion per GB (2^30 bytes). */
  logsIngestionGb: 0.5,
  /** SQS standard queue, per request (each 64 KB of a payload is one request). */
  sqsRequest: 0.4 / 1e6,
  /** S3 Standard: PUT, COPY, POST, LIST per request; GET and the other reads per request. */
  s3WriteRequest: 0.005 / 1000,
  s3ReadRequest: 0.0004 / 1000,
  /** KMS: a customer managed key per month, and symmetric requests (Decrypt, GenerateDataKey). */
  kmsKeyMonth: 1,
  kmsRequest: 0.03 / 10_000,
  /** Fargate Linux/ARM (Graviton) per vCPU-hour and per GB-hour. */
  fargateArmVcpuHour: 0.03238,
  fargateArmGbHour: 0.00356,
  /** Application Load Balancer per hour and per LCU-hour. */
  albHour: 0.0225,
  albLcuHour: 0.008,
  sources: [
    'https://aws.amazon.com/lambda/pricing/',
    'https://aws.amazon.com/api-gateway/pricing/',
    'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    'https://aws.amazon.com/cloudwatch/pricing/',
    'https://aws.amazon.com/sqs/pricing/',
    'https://aws.amazon.com/s3/pricing/',
    'https://aws.amazon.com/kms/pricing/',
    'https://aws.amazon.com/fargate/pricing/',
    'https://aws.amazon.com/elasticloadbalancing/pricing/',
  ],
} as const;

export type Prices = typeof PRICES;

/** Hours in the month the monthly figures use (365 × 24 / 12). */
export const HOURS_PER_MONTH = 730;
