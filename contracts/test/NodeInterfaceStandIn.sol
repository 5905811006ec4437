// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

/**
 * For tests only: answers what Arbitrum's NodeInterface (0x00000000000000000000000000000000000000C8) answers to
 * gasEstimateL1Component. A real Arbitrum node answers that address itself, on eth_call only; on anvil the tests put
 * this code there with anvil_setCode and set its figures with anvil_setStorageAt, so the slots below are its interface:
 *
 *   slot 0  l1GasPerByte       L1 gas per byte of `data`
 *   slot 1  l1GasConstant      L1 gas added to every answer
 *   slot 2  l2BaseFee          the `baseFee` answered (not the block's: anvil's sinks as blocks stay empty)
 *   slot 3  l1BaseFeeEstimate  the `l1BaseFeeEstimate` answered
 *
 * A code put in with anvil_setCode runs no constructor, so every figure starts at zero until a test sets it.
 */
contract NodeInterfaceStandIn {
    uint256 public l1GasPerByte;
    uint256 public l1GasConstant;
    uint256 public l2BaseFee;
    uint256 public l1BaseFeeEstimate;

    /// Payable as on Arbitrum, where the interface declares it so.
    function gasEstimateL1Component(address, bool, bytes calldata data)
        external
        payable
        returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate_)
    {
        gasEstimateForL1 = uint64(l1GasConstant + l1GasPerByte * data.length);
        return (gasEstimateForL1, l2BaseFee, l1BaseFeeEstimate);
    }
}
