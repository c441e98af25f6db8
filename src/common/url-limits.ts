/**
 * The longest path parameter, in bytes of UTF-8 once decoded: a projection state key's limit
 * (the longest thing a path carries; ids are ≤ 200 characters). Longer is `414 URI_TOO_LONG`.
 */
export const MAX_PATH_PARAM_BYTES = 1024;

/**
 * Fastify's own cap on one path parameter (`maxParamLength`, 100 by default). Set so that no
 * parameter within MAX_PATH_PARAM_BYTES is ever cut by the router, however it is written:
 * find-my-way measures a parameter after decoding today, but a 1,024-byte key sent fully
 * percent-encoded is 3,072 characters, so the cap fits that too. Anything past it is answered
 * 414 URI_TOO_LONG like a parameter over MAX_PATH_PARAM_BYTES (see fromFrameworkError).
 */
export const ROUTER_MAX_PARAM_LENGTH = 3 * MAX_PATH_PARAM_BYTES;
