/** The most blocks a paymaster may ask its v0.9 signatures to stay valid: about 2.3 days at 2 s a block, 14 at 12 s. */
export const MAX_VALIDITY_BLOCKS = 100_000;
