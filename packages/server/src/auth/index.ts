/** Signed-token authentication for the bridge (jose): verify with `tokenAuthenticator`, sign with `signToken`. */
export { tokenAuthenticator } from "./authenticate.js";
export type { TokenAuthenticate, TokenAuthenticatorOptions, TokenPrincipal } from "./authenticate.js";
export { signToken } from "./sign.js";
export type { SignTokenOptions, TokenClaims } from "./sign.js";
