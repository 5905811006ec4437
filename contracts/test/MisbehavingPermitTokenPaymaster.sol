// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "../v07/PermitTokenPaymasterV07.sol";

interface IOpenMint {
    function mint(address to, uint256 amount) external;
}

/**
 * PermitTokenPaymasterV07 with one breach of ERC-7562 in front of its validation, for the tests only: it shows that
 * test/helpers/erc7562.ts fails on what a bundler would refuse, on code that otherwise passes.
 * - ReadsClock: refuses an expired quote by reading TIMESTAMP, the natural mistake (the EntryPoint judges validUntil
 *   from validationData precisely so that validation need not read the clock);
 * - WritesTokenSupply: mints nothing to itself, which still writes the token's totalSupply, a slot associated with no
 *   entity, which not even a staked paymaster may write.
 */
contract MisbehavingPermitTokenPaymaster is PermitTokenPaymasterV07 {
    enum Misstep {
        ReadsClock,
        WritesTokenSupply
    }

    Misstep public immutable misstep;

    constructor(IEntryPoint entryPoint_, address owner_, Misstep misstep_) PermitTokenPaymasterV07(entryPoint_, owner_) {
        misstep = misstep_;
    }

    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        public
        override
        returns (bytes memory context, uint256 validationData)
    {
        // validUntil and feeToken are the first and third words of the terms, at byte 53 of paymasterAndData.
        if (misstep == Misstep.ReadsClock) {
            uint48 validUntil = abi.decode(userOp.paymasterAndData[53:85], (uint48));
            require(validUntil == 0 || block.timestamp <= validUntil, "MisbehavingPermitTokenPaymaster: quote expired");
        } else {
            IOpenMint(abi.decode(userOp.paymasterAndData[117:149], (address))).mint(address(this), 0);
        }
        return super.validatePaymasterUserOp(userOp, userOpHash, maxCost);
    }
}
