/** The most characters a sponsor icon's data URI may have: about 24 KB of image in base64, plenty for a 64 px icon. */
export const MAX_SPONSOR_ICON_LENGTH = 32_768;
