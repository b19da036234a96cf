/** Signed-token authentication for the bridge (jose). */
export { tokenAuthenticator } from "./authenticate.js";
export type { TokenAuthenticatorOptions, TokenPrincipal } from "./authenticate.js";
