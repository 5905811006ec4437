/** Clocks of our host and of the chain's block producers differ a little; an operation must not be born expired. */
export const CLOCK_SKEW_SECONDS = 60;
