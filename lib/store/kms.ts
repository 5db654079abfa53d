// What the gateway uses of the KMS client, in a module of its own: loaded with `import()`, a
// module keeps every export, and the client package exports every KMS command.
export { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
