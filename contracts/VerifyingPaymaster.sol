// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@account-abstraction/contracts/core/Helpers.sol";
import "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts/interfaces/IPaymaster.sol";
import "./SignerSet.sol";

/**
 * A verifying paymaster shared by many dApps (EntryPoint v0.6).
 *
 * Each dApp funds a balance keyed by its `paymasterId` (its funding wallet). The service signs, off-chain, every
 * operation it agrees to sponsor; the EntryPoint takes gas from this contract's one EntryPoint deposit, and this contract
 * charges that cost, plus a fixed post-operation overhead, to the dApp's balance.
 *
 * paymasterAndData = paymaster address (20 bytes)
 *                    ++ abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
 *
 * Why IPaymaster and not BasePaymaster (v0.6): BasePaymaster's `withdrawTo(address,uint256)` is owner-only and not
 * virtual, so funding wallets could not withdraw under that name, and the owner could pull the dApps' money out of the
 * shared EntryPoint deposit (as could its `deposit()` add money credited to nobody). The owner keeps the staking
 * functions of BasePaymaster; the deposit belongs to the dApps.
 *
 * The service's signatures are accepted from any key of the owner's SignerSet, so a key rotation invalidates no
 * signature in flight, and the constructor takes no key, so the CREATE2 address depends only on the code, the
 * EntryPoint and the owner.
 */
contract VerifyingPaymaster is IPaymaster, SignerSet {
    /**
     * Gas the EntryPoint charges this paymaster that postOp's `actualGasCost` does not include yet: the postOp call
     * itself (context decoding, one storage write, one event) and the EntryPoint's accounting after it. Measured on
     * anvil (test/contracts): 5,086 gas, the same whether the user's call succeeded or reverted; postOp's write is cheap
     * because validation already wrote the same slot. Charging less than the real figure would let the shared deposit
     * fall below the sum of the balances, so the last dApp to withdraw could not; 12,000 is also what the service the
     * dApps come from charges (docs/contracts.md, 'Post-op overhead'). The difference stays in the EntryPoint deposit
     * as a buffer against gas repricing; no function withdraws it.
     */
    uint256 public constant POST_OP_OVERHEAD_GAS = 12_000;

    uint256 private constant SIGNATURE_LENGTH = 65;
    uint256 private constant PAYMASTER_ADDRESS_LENGTH = 20;

    IEntryPoint public immutable entryPoint;
    mapping(address => uint256) private balances;

    event GasDeposited(address indexed paymasterId, address indexed from, uint256 amount);
    event GasWithdrawn(address indexed paymasterId, address indexed to, uint256 amount);
    event GasCharged(address indexed paymasterId, bytes32 indexed userOpHash, uint256 charge);

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "VerifyingPaymaster: entryPoint is zero");
        require(owner_ != address(0), "VerifyingPaymaster: owner is zero");
        entryPoint = entryPoint_;
        _transferOwnership(owner_);
    }

    // ---- dApp deposits ----

    /// Adds to `paymasterId`'s balance; the value goes straight into this paymaster's EntryPoint deposit.
    function depositFor(address paymasterId) external payable {
        require(paymasterId != address(0), "VerifyingPaymaster: paymasterId is zero");
        require(msg.value > 0, "VerifyingPaymaster: nothing to deposit");
        balances[paymasterId] += msg.value;
        entryPoint.depositTo{value: msg.value}(address(this));
        emit GasDeposited(paymasterId, msg.sender, msg.value);
    }

    /// The caller is the paymasterId: a funding wallet can only move its own balance.
    function withdrawTo(address payable target, uint256 amount) external {
        require(target != address(0), "VerifyingPaymaster: target is zero");
        uint256 balance = balances[msg.sender];
        require(amount <= balance, "VerifyingPaymaster: amount exceeds balance");
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

    /// What a signer of the set signs (EIP-191 personal_sign over these 32 bytes). paymasterAndData is left out, since
    /// it carries the signature; the chain id and this address stop a signature from being replayed elsewhere.
    function getHash(UserOperation calldata userOp, address paymasterId, uint48 validUntil, uint48 validAfter)
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
                    userOp.callGasLimit,
                    userOp.verificationGasLimit,
                    userOp.preVerificationGas
                ),
                abi.encode(
                    userOp.maxFeePerGas,
                    userOp.maxPriorityFeePerGas,
                    block.chainid,
                    address(this),
                    paymasterId,
                    validUntil,
                    validAfter
                )
            )
        );
    }

    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public
        pure
        returns (address paymasterId, uint48 validUntil, uint48 validAfter, bytes memory signature)
    {
        return abi.decode(paymasterAndData[PAYMASTER_ADDRESS_LENGTH:], (address, uint48, uint48, bytes));
    }

    // ---- EntryPoint hooks ----

    /**
     * A bad signature (wrong signer, another chain, a changed field, v not 27/28, high s) is reported as
     * SIG_VALIDATION_FAILED rather than a revert, as ERC-4337 asks, so a bundler can still simulate with stub data.
     * Only a signature of the wrong length reverts: it can never be valid, so it is malformed input.
     *
     * The worst-case charge is taken from the dApp's balance here and the unused part is given back in postOp. Checking
     * the balance without reserving would let several operations of one dApp in one bundle all pass validation against
     * the same balance, and postOp would then find it short.
     */
    function validatePaymasterUserOp(UserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (address paymasterId, uint48 validUntil, uint48 validAfter, bytes memory signature) =
            parsePaymasterAndData(userOp.paymasterAndData);
        require(signature.length == SIGNATURE_LENGTH, "VerifyingPaymaster: signature must be 65 bytes (r,s,v)");

        if (!_signedByASigner(getHash(userOp, paymasterId, validUntil, validAfter), signature)) {
            return ("", _packValidationData(true, validUntil, validAfter));
        }
        context = _reserve(paymasterId, userOpHash, maxCost, userOp.maxFeePerGas, userOp.maxPriorityFeePerGas);
        return (context, _packValidationData(false, validUntil, validAfter));
    }

    /// Takes the worst case (maxCost plus the overhead at maxFeePerGas) and returns the context postOp settles from.
    function _reserve(
        address paymasterId,
        bytes32 userOpHash,
        uint256 maxCost,
        uint256 maxFeePerGas,
        uint256 maxPriorityFeePerGas
    ) private returns (bytes memory context) {
        uint256 reserved = maxCost + POST_OP_OVERHEAD_GAS * maxFeePerGas;
        uint256 balance = balances[paymasterId];
        require(balance >= reserved, "VerifyingPaymaster: paymasterId deposit too low");
        balances[paymasterId] = balance - reserved;
        return abi.encode(paymasterId, userOpHash, reserved, maxFeePerGas, maxPriorityFeePerGas);
    }

    /**
     * Charges actualGasCost + POST_OP_OVERHEAD_GAS * gas price in every mode (the EntryPoint pays in every mode too).
     *
     * This must never revert: a revert in opSucceeded mode makes the EntryPoint undo the user's call and retry in
     * postOpReverted mode, and a second revert fails the whole bundle (AA50), which the bundler pays for. So the charge
     * is capped at what validation reserved instead of being checked: the cap can only bind if the EntryPoint's own
     * accounting exceeded the prefund it computed, in which case the EntryPoint reverts anyway (AA51).
     */
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost) external override {
        _requireFromEntryPoint();
        (mode); // every mode is charged alike
        (address paymasterId, bytes32 userOpHash, uint256 reserved, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas) =
            abi.decode(context, (address, bytes32, uint256, uint256, uint256));

        uint256 charge = actualGasCost + POST_OP_OVERHEAD_GAS * _gasPrice(maxFeePerGas, maxPriorityFeePerGas);
        if (charge > reserved) charge = reserved;
        balances[paymasterId] += reserved - charge;
        emit GasCharged(paymasterId, userOpHash, charge);
    }

    /// The EntryPoint's own rule (UserOperationLib.gasPrice), so the overhead is priced as the EntryPoint prices gas.
    function _gasPrice(uint256 maxFeePerGas, uint256 maxPriorityFeePerGas) private view returns (uint256) {
        if (maxFeePerGas == maxPriorityFeePerGas) return maxFeePerGas; // legacy chains without BASEFEE
        uint256 price = maxPriorityFeePerGas + block.basefee;
        return price < maxFeePerGas ? price : maxFeePerGas;
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "VerifyingPaymaster: sender not EntryPoint");
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
        revert("VerifyingPaymaster: ownership cannot be renounced");
    }
}
