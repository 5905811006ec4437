// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

/**
 * EntryPoint v0.9's paymaster signature suffix, read the way the EntryPoint reads it:
 *   paymasterAndData = ... ++ paymasterData ++ paymasterSignature ++ uint16(len(paymasterSignature)) ++ MAGIC
 * where MAGIC is the first 8 bytes of keccak256("PaymasterSignature"). The EntryPoint itself reverts on a suffix whose
 * length reaches into the 52 fixed bytes, so the bounds below only guard calls made outside validation.
 */
library PaymasterSignatureV09 {
    bytes8 internal constant MAGIC = 0x22e325a297439656;
    /// The paymaster address and its two gas limits, which come before paymasterData.
    uint256 internal constant FIXED_LENGTH = 52;
    /// uint16 length ++ magic.
    uint256 internal constant TRAILER_LENGTH = 10;

    function hasSuffix(bytes calldata paymasterAndData) internal pure returns (bool) {
        uint256 length = paymasterAndData.length;
        return length >= FIXED_LENGTH + TRAILER_LENGTH && bytes8(paymasterAndData[length - 8:length]) == MAGIC;
    }

    /// paymasterData (without the suffix) and the suffix's signature (empty without a suffix).
    function split(bytes calldata paymasterAndData)
        internal
        pure
        returns (bytes calldata paymasterData, bytes calldata signature)
    {
        uint256 length = paymasterAndData.length;
        if (!hasSuffix(paymasterAndData)) {
            return (paymasterAndData[FIXED_LENGTH:], paymasterAndData[length:]);
        }
        uint256 signatureLength = uint16(bytes2(paymasterAndData[length - TRAILER_LENGTH:length - 8]));
        require(
            length >= FIXED_LENGTH + TRAILER_LENGTH + signatureLength, "PaymasterSignatureV09: signature length too long"
        );
        uint256 signatureStart = length - TRAILER_LENGTH - signatureLength;
        return (paymasterAndData[FIXED_LENGTH:signatureStart], paymasterAndData[signatureStart:length - TRAILER_LENGTH]);
    }
}
