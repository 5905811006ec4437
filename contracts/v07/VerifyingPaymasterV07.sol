// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@account-abstraction/contracts-v0.7/core/Helpers.sol";
import "@account-abstraction/contracts-v0.7/core/UserOperationLib.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IPaymaster.sol";
import "../SignerSet.sol";

/**
 * A verifying paymaster shared by many dApps, for EntryPoint v0.7 and v0.8 (both take the v0.7 PackedUserOperation
 * and call the same IPaymaster hooks; deploy one per EntryPoint, which is a constructor argument).
 *
 * Each dApp funds a balance keyed by its `paymasterId` (its funding wallet). The service signs, off-chain, every
 * operation it agrees to sponsor; the EntryPoint takes gas from this contract's one EntryPoint deposit, and postOp
 * charges the operation's cost to the dApp's balance (docs/contracts.md, 'VerifyingPaymasterV07 (EntryPoint v0.7 and
 * v0.8)').
 *
 * paymasterAndData = paymaster address (20 bytes) ++ paymasterVerificationGasLimit (16) ++ paymasterPostOpGasLimit (16)
 *                    ++ abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
 *
 * Not BasePaymaster, for the reasons given on the v0.6 VerifyingPaymaster: its owner-only withdrawTo would let the owner
 * take the dApps' money, and the dApps could not withdraw their own under that name.
 *
 * The service's signatures are accepted from any key of the owner's SignerSet, so a key rotation invalidates no
 * signature in flight, and the constructor takes no key, so the CREATE2 address depends only on the code, the
 * EntryPoint and the owner.
 */
contract VerifyingPaymasterV07 is IPaymaster, SignerSet {
    using UserOperationLib for PackedUserOperation;

    /**
     * Gas the EntryPoint charges this paymaster beyond postOp's `actualGasCost`, apart from the unused-gas penalty
     * (below): the postOp call itself and the EntryPoint's accounting after it. The v0.6 contract measured 5,086 gas for
     * the same work; 12,000 keeps its margin, and the tests (test/contracts/v07) check that a dApp is never charged less
     * than the EntryPoint took. Charging less would let the shared deposit fall below the sum of the balances. What is
     * over-collected stays in the EntryPoint deposit as a buffer; no function withdraws it.
     */
    uint256 public constant POST_OP_OVERHEAD_GAS = 12_000;

    /// The EntryPoint's penalty on unused execution gas (callGasLimit + paymasterPostOpGasLimit), in percent.
    uint256 public constant UNUSED_GAS_PENALTY_PERCENT = 10;

    uint256 private constant SIGNATURE_LENGTH = 65;

    IEntryPoint public immutable entryPoint;
    mapping(address => uint256) private balances;

    event GasDeposited(address indexed paymasterId, address indexed from, uint256 amount);
    event GasWithdrawn(address indexed paymasterId, address indexed to, uint256 amount);
    event GasCharged(address indexed paymasterId, bytes32 indexed userOpHash, uint256 charge);

    /// What validation hands to postOp: who pays, what was reserved, and the bounds of the penalty estimate.
    struct ChargeContext {
        address paymasterId;
        bytes32 userOpHash;
        uint256 reserved;
        /// preVerificationGas + verificationGasLimit + paymasterVerificationGasLimit: the most gas spent before execution.
        uint256 preExecutionGasLimit;
        /// callGasLimit + paymasterPostOpGasLimit: the gas the EntryPoint penalises when left unused.
        uint256 executionGasLimit;
    }

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "VerifyingPaymasterV07: entryPoint is zero");
        require(owner_ != address(0), "VerifyingPaymasterV07: owner is zero");
        entryPoint = entryPoint_;
        _transferOwnership(owner_);
    }

    // ---- dApp deposits ----

    /// Adds to `paymasterId`'s balance; the value goes straight into this paymaster's EntryPoint deposit.
    function depositFor(address paymasterId) external payable {
        require(paymasterId != address(0), "VerifyingPaymasterV07: paymasterId is zero");
        require(msg.value > 0, "VerifyingPaymasterV07: nothing to deposit");
        balances[paymasterId] += msg.value;
        entryPoint.depositTo{value: msg.value}(address(this));
        emit GasDeposited(paymasterId, msg.sender, msg.value);
    }

    /// The caller is the paymasterId: a funding wallet can only move its own balance.
    function withdrawTo(address payable target, uint256 amount) external {
        require(target != address(0), "VerifyingPaymasterV07: target is zero");
        uint256 balance = balances[msg.sender];
        require(amount <= balance, "VerifyingPaymasterV07: amount exceeds balance");
        balances[msg.sender] = balance - amount; // before the external call: a re-entering target sees the new balance
        emit GasWithdrawn(msg.sender, target, amount);
        entryPoint.withdrawTo(target, amount);
    }

    function getBalance(address paymasterId) external view returns (uint256) {
        return balances[paymasterId];
    }

    /// This paymaster's whole EntryPoint deposit: the dApps' balances plus whatever the overhead over-collected.
    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    // ---- signing ----

    /**
     * What a signer of the set signs (EIP-191 personal_sign over these 32 bytes): every field of the packed operation
     * except the two that carry signatures, the two paymaster gas limits from paymasterAndData (which must therefore be
     * at least 52 bytes long), the chain id and this address (so a signature cannot be replayed on another chain or
     * another paymaster, this contract's v0.6 sibling included), and the sponsorship's terms.
     */
    function getHash(PackedUserOperation calldata userOp, address paymasterId, uint48 validUntil, uint48 validAfter)
        public
        view
        returns (bytes32)
    {
        // Two abi.encode of static values concatenated are byte-identical to one abi.encode of all fourteen; the split
        // only keeps the compiler under its stack limit.
        return keccak256(
            bytes.concat(
                abi.encode(
                    userOp.sender,
                    userOp.nonce,
                    calldataKeccak(userOp.initCode),
                    calldataKeccak(userOp.callData),
                    userOp.accountGasLimits,
                    userOp.preVerificationGas,
                    userOp.gasFees
                ),
                abi.encode(
                    userOp.unpackPaymasterVerificationGasLimit(),
                    userOp.unpackPostOpGasLimit(),
                    block.chainid,
                    address(this),
                    paymasterId,
                    validUntil,
                    validAfter
                )
            )
        );
    }

    /// Our part of paymasterAndData, after the 52 bytes the EntryPoint reads (address and the two gas limits).
    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public
        pure
        returns (address paymasterId, uint48 validUntil, uint48 validAfter, bytes memory signature)
    {
        return abi.decode(
            paymasterAndData[UserOperationLib.PAYMASTER_DATA_OFFSET:], (address, uint48, uint48, bytes)
        );
    }

    // ---- EntryPoint hooks ----

    /**
     * A bad signature (wrong signer, another chain, a changed field, v not 27/28, high s) is reported as
     * SIG_VALIDATION_FAILED rather than a revert, as ERC-4337 asks, so a bundler can still simulate with stub data.
     * Only a signature of the wrong length reverts: it can never be valid, so it is malformed input.
     *
     * maxCost (the EntryPoint's prefund for the operation, paymaster gas limits included) is taken from the dApp's
     * balance here and the unused part given back in postOp. Reserving rather than only checking keeps several
     * operations of one dApp in one bundle from all passing against the same balance. The EntryPoint never charges an
     * operation more than that prefund, so the reservation always covers it.
     */
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (address paymasterId, uint48 validUntil, uint48 validAfter, bytes memory signature) =
            parsePaymasterAndData(userOp.paymasterAndData);
        require(signature.length == SIGNATURE_LENGTH, "VerifyingPaymasterV07: signature must be 65 bytes (r,s,v)");

        if (!_signedByASigner(getHash(userOp, paymasterId, validUntil, validAfter), signature)) {
            return ("", _packValidationData(true, validUntil, validAfter));
        }
        uint256 balance = balances[paymasterId];
        require(balance >= maxCost, "VerifyingPaymasterV07: paymasterId deposit too low");
        balances[paymasterId] = balance - maxCost;
        context = abi.encode(
            ChargeContext({
                paymasterId: paymasterId,
                userOpHash: userOpHash,
                reserved: maxCost,
                preExecutionGasLimit: userOp.preVerificationGas + userOp.unpackVerificationGasLimit()
                    + userOp.unpackPaymasterVerificationGasLimit(),
                executionGasLimit: userOp.unpackCallGasLimit() + userOp.unpackPostOpGasLimit()
            })
        );
        return (context, _packValidationData(false, validUntil, validAfter));
    }

    /**
     * Charges the cost the EntryPoint will take for the operation, bounded from above, in every mode (the EntryPoint
     * charges in every mode too), and gives back the rest of the reservation.
     *
     * After postOp the EntryPoint adds the postOp call, its own accounting (POST_OP_OVERHEAD_GAS covers both) and a
     * penalty of 10% of the execution gas left unused. That penalty depends on the gas spent before execution, which
     * postOp cannot see; taking it at its limit (preExecutionGasLimit) gives the smallest execution gas the operation
     * can have used, hence the largest penalty. EntryPoint v0.8 charges the penalty only past 40,000 unused gas and has
     * already counted the call's share in actualGasCost, so there this over-charges by at most 10% of the unused call
     * gas; the surplus stays in the deposit.
     *
     * This must never revert: a revert in opSucceeded mode makes the EntryPoint undo the user's call and charge the
     * whole prefund, and the reservation then stays taken. The cap at the reservation can only bind when the
     * EntryPoint itself would have charged the whole prefund.
     */
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        external
        override
    {
        _requireFromEntryPoint();
        (mode); // every mode is charged alike
        ChargeContext memory charge = abi.decode(context, (ChargeContext));
        uint256 cost = actualGasCost
            + (POST_OP_OVERHEAD_GAS + _unusedGasPenaltyBound(charge, actualGasCost, actualUserOpFeePerGas))
                * actualUserOpFeePerGas;
        if (cost > charge.reserved) cost = charge.reserved;
        balances[charge.paymasterId] += charge.reserved - cost;
        emit GasCharged(charge.paymasterId, charge.userOpHash, cost);
    }

    function _unusedGasPenaltyBound(ChargeContext memory charge, uint256 actualGasCost, uint256 feePerGas)
        private
        pure
        returns (uint256)
    {
        if (feePerGas == 0) return 0; // nothing to charge, and no division by zero
        uint256 gasSoFar = actualGasCost / feePerGas;
        uint256 executionGasUsed = gasSoFar > charge.preExecutionGasLimit ? gasSoFar - charge.preExecutionGasLimit : 0;
        if (executionGasUsed >= charge.executionGasLimit) return 0;
        return (charge.executionGasLimit - executionGasUsed) * UNUSED_GAS_PENALTY_PERCENT / 100;
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "VerifyingPaymasterV07: sender not EntryPoint");
    }

    // ---- owner: staking (ERC-7562 asks a paymaster that keeps per-dApp storage to be staked) ----

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable target) external onlyOwner {
        entryPoint.withdrawStake(target);
    }

    /// Without an owner the signer set could never change after a key leak, and a leaked key can spend every balance.
    function renounceOwnership() public view override onlyOwner {
        revert("VerifyingPaymasterV07: ownership cannot be renounced");
    }
}
