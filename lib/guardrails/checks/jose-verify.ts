// What default.jwt uses of jose, in a module of its own: loaded with `import()`, a module keeps
// every export, and jose exports far more than a verifier.
export { createLocalJWKSet, errors, jwtVerify } from 'jose';
