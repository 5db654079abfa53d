import { Hash } from '@smithy/hash-node';

/** Credentials a SigV4 signature is made with. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** `@smithy/hash-node`'s Hash fixed to SHA-256, in the constructor shape `SignatureV4` wants. */
export class Sha256 extends Hash {
  constructor(secret?: ConstructorParameters<typeof Hash>[1]) {
    super('sha256', secret);
  }
}
