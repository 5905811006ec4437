// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import "@openzeppelin/contracts/utils/math/Math.sol";
import "@account-abstraction/contracts-v0.7/core/Helpers.sol";
import "@account-abstraction/contracts-v0.7/core/UserOperationLib.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IPaymaster.sol";
import "../SignerSet.sol";
import "../v09/PaymasterSignatureV09.sol";

/// The EIP-2612 permit in USDC's (FiatToken v2.2) form with a `bytes` signature, which ERC-1271 signatures fit.
interface IERC20PermitWithBytes {
    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes calldata signature) external;
}

/// The two reads of a Chainlink AggregatorV3Interface this paymaster makes.
interface IPermitPriceFeed {
    function decimals() external view returns (uint8);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/**
 * A token paymaster that takes the most an operation can cost, in the fee token, during validation, and gives the
 * rest back in postOp: for EntryPoint v0.7, v0.8 and v0.9 (one deployment per EntryPoint, the EntryPoint a constructor
 * argument). The gas is paid from this contract's own EntryPoint deposit, which its owner funds; the sender pays it
 * back at a rate the service signs or an oracle gives, plus a signed markup, as with TokenPaymasterV07.
 *
 * Why up front: TokenPaymasterV07 pulls its charge in postOp, which EntryPoint v0.7 and later call once. An execution
 * that spends the tokens or revokes the allowance makes that pull fail, and the deposit pays the gas with nothing
 * charged. Here the charge is already held when the execution starts, so nothing the execution does can dodge it. And
 * the sender need not approve in its batch: a permit signed by its owner may come in paymasterData instead.
 *
 * paymasterAndData:
 *   [0:20]      this contract's address                        \
 *   [20:36]     paymasterVerificationGasLimit (uint128)          } read by the EntryPoint
 *   [36:52]     paymasterPostOpGasLimit (uint128)               /
 *   [52]        priceSource: 0 = the signed exchangeRate, 1 = the oracle aggregator's price
 *   [53:245]    abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
 *                          uint256 exchangeRate, uint32 priceMarkup)                 (TokenPaymasterV07's terms)
 *   [245:247]   uint16 permitLength: 0 when no permit is carried
 *   [247:247+permitLength]  the permit: uint256 value ++ the owner's permit signature (permitLength - 32 bytes)
 *   then        the service's signature, 65 bytes r,s,v; or nothing when EntryPoint v0.9's suffix carries it
 *   [v0.9 only] paymasterSignature ++ uint16(len) ++ PAYMASTER_SIG_MAGIC (PaymasterSignatureV09.sol)
 * The permit's spender is this contract, its owner the sender, its deadline type(uint256).max (not carried): only that
 * deadline lets a USDC-style token skip the clock, whose TIMESTAMP ERC-7562 bans in validation.
 *
 * Two ways to sign, as VerifyingPaymasterV09: sequential (any version), a signature in paymasterData over getHash,
 * which binds the permit's bytes too; parallel (v0.9 only), a signature in the suffix over the EntryPoint's userOpHash,
 * which binds every field of the operation but that signature. On v0.7 and v0.8 the userOpHash covers the whole of
 * paymasterAndData, a signature there included, so a suffix can never carry a valid signature there.
 *
 * ERC-7562: validation reads no clock or block value (an oracle price's age shortens validUntil instead), and touches
 * the token's storage (the sender's balance, nonce and allowance for this contract, this contract's balance) and the
 * aggregator's: the paymaster must be staked, as it must be anyway to return a context.
 *
 * The service's signatures are accepted from any key of the owner's SignerSet; the constructor takes no key, so the
 * CREATE2 address depends only on the code, the EntryPoint and the owner.
 */
contract PermitTokenPaymasterV07 is IPaymaster, SignerSet {
    using SafeERC20 for IERC20;
    using UserOperationLib for PackedUserOperation;

    /// The signed terms of paymasterAndData, besides the permit and the signature (TokenPaymasterV07's FeeTerms).
    struct FeeTerms {
        uint8 priceSource;
        uint48 validUntil;
        uint48 validAfter;
        address feeToken;
        address oracleAggregator;
        uint256 exchangeRate;
        uint32 priceMarkup;
    }

    /// What validation hands to postOp.
    struct ChargeContext {
        address sender;
        address feeToken;
        /// The rate the charge uses: the signed one, or the oracle's as read during validation.
        uint256 exchangeRate;
        uint32 priceMarkup;
        /// The tokens taken from the sender in validation: the EntryPoint's prefund at that rate and markup.
        uint256 prefund;
        bytes32 userOpHash;
    }

    uint8 public constant PRICE_SOURCE_EXCHANGE_RATE = 0;
    uint8 public constant PRICE_SOURCE_ORACLE = 1;
    /// priceMarkup is in millionths: 1e6 charges the cost as is, 2e6 twice the cost.
    uint32 public constant MIN_PRICE_MARKUP = 1e6;
    uint32 public constant MAX_PRICE_MARKUP = 2e6;
    /// The one deadline a carried permit is run with (see the layout above).
    uint256 public constant PERMIT_DEADLINE = type(uint256).max;

    /**
     * Gas the EntryPoint charges this paymaster that postOp's `actualGasCost` does not include yet: postOp itself (the
     * context decoding, the refund's transfer, the event), the EntryPoint's accounting after it, and its penalty on
     * unused gas. Measured on anvil with the local USDC-like token (test/contracts/v07/permitTokenPaymaster.test.ts):
     * postOp uses about 10,200 gas (the refund writes balances validation already wrote in the same transaction, so it
     * stays cheap even when the execution emptied the sender's), and the EntryPoint takes about 16,300 after
     * actualGasCost on v0.8 and v0.9, 26,000 on v0.7 with 100,000 call gas and 60,000 postOp gas signed (most of it
     * v0.7's 10% of the unused gas). 30,000 leaves room for heavier tokens (a proxy, blocklists); a larger v0.7
     * penalty (much unused call gas) is the markup's to cover, as with TokenPaymasterV07.
     */
    uint256 public constant POST_OP_OVERHEAD_GAS = 30_000;

    uint256 private constant TERMS_LENGTH = 1 + 6 * 32;
    uint256 private constant PERMIT_LENGTH_BYTES = 2;
    uint256 private constant PERMIT_VALUE_LENGTH = 32;
    uint256 private constant SIGNATURE_LENGTH = 65;
    /// 1e18 wei per exchangeRate unit times 1e6 markup millionths.
    uint256 private constant RATE_AND_MARKUP_DENOMINATOR = 1e24;

    IEntryPoint public immutable entryPoint;
    /// An oracle price older than this (seconds) is refused: the operation's validUntil is cut to
    /// updatedAt + maxPriceAge.
    uint48 public maxPriceAge;

    /// `charge` is what the sender paid in the end, `refund` what postOp gave back of the prefund taken in validation.
    event TokenCharged(
        address indexed sender,
        address indexed feeToken,
        bytes32 indexed userOpHash,
        uint256 charge,
        uint256 refund,
        uint256 gasCost,
        uint256 exchangeRate,
        uint32 priceMarkup
    );
    event MaxPriceAgeChanged(uint48 previousMaxPriceAge, uint48 newMaxPriceAge);
    event TokensWithdrawn(address indexed token, address indexed to, uint256 amount);

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "PermitTokenPaymasterV07: entryPoint is zero");
        require(owner_ != address(0), "PermitTokenPaymasterV07: owner is zero");
        entryPoint = entryPoint_;
        // Chainlink's slowest common heartbeat; the owner tightens it per deployment.
        maxPriceAge = 1 days;
        _transferOwnership(owner_);
    }

    // ---- what the service and the tests compute the same way ----

    /**
     * The sequential signature's hash (EIP-191 personal_sign over these 32 bytes): TokenPaymasterV07's getHash (every
     * field of the packed operation but the two that carry signatures, the two paymaster gas limits, the chain id,
     * this address, the price source and the six terms) followed by `permitHash`, keccak256 of the permit's bytes
     * (of no bytes when none is carried).
     */
    function getHash(PackedUserOperation calldata userOp, FeeTerms memory terms, bytes32 permitHash)
        public
        view
        returns (bytes32)
    {
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
                    terms.priceSource,
                    terms.validUntil
                ),
                abi.encode(
                    terms.validAfter,
                    terms.feeToken,
                    terms.oracleAggregator,
                    terms.exchangeRate,
                    terms.priceMarkup,
                    permitHash
                )
            )
        );
    }

    /// The layout's parts: the terms, the permit's bytes, the in-data signature and the v0.9 suffix's signature.
    function parsePaymasterAndData(bytes calldata paymasterAndData)
        external
        pure
        returns (FeeTerms memory terms, bytes memory permit, bytes memory signature, bytes memory paymasterSignature)
    {
        return _parse(paymasterAndData);
    }

    /// Token base units for `weiAmount` at `exchangeRate` (per 1e18 wei) with `priceMarkup` (millionths), rounded up.
    function tokenAmount(uint256 weiAmount, uint256 exchangeRate, uint32 priceMarkup) public pure returns (uint256) {
        return Math.mulDiv(weiAmount, exchangeRate * priceMarkup, RATE_AND_MARKUP_DENOMINATOR, Math.Rounding.Up);
    }

    /**
     * The exchange rate an aggregator gives for `feeToken` (whole fee tokens per whole native token, with the
     * aggregator's decimals), as TokenPaymasterV07.oracleRate; staleness is the caller's to judge from `updatedAt`.
     */
    function oracleRate(address feeToken, address aggregator) public view returns (uint256 rate, uint256 updatedAt) {
        require(aggregator != address(0), "PermitTokenPaymasterV07: oracle aggregator is zero");
        int256 answer;
        (, answer,, updatedAt,) = IPermitPriceFeed(aggregator).latestRoundData();
        require(answer > 0, "PermitTokenPaymasterV07: oracle price is zero or negative");
        require(updatedAt > 0, "PermitTokenPaymasterV07: oracle round not complete");
        rate = Math.mulDiv(
            uint256(answer), 10 ** IERC20Metadata(feeToken).decimals(), 10 ** IPermitPriceFeed(aggregator).decimals()
        );
        require(rate > 0, "PermitTokenPaymasterV07: oracle price rounds to a zero exchange rate");
    }

    // ---- EntryPoint hooks ----

    /**
     * Checks the service's signature and the terms, runs a carried permit when the allowance is short, and takes the
     * prefund: maxCost (every gas limit at maxFeePerGas, the most the EntryPoint can take for the operation) in tokens.
     *
     * A signature by another key, over another chain or over any changed field is SIG_VALIDATION_FAILED (AA34), as
     * ERC-4337 asks, and the rest still runs, so that a stub signature exercises the whole validation and postOp when a
     * bundler estimates gas (the EntryPoint reverts the bundle on AA34, so no token moves for such an operation).
     * Malformed data, a markup outside 1e6..2e6, a bad price, an allowance or a balance short of the prefund revert
     * with a reason (AA33).
     *
     * The permit runs inside try/catch: anyone who saw it (in the mempool, or the bundle) may submit it to the token
     * first, and then it has done its work and its nonce is used, so its failure alone says nothing; the allowance
     * read after it does. It runs only when the allowance is short, so an operation whose permit was front-run, or
     * whose sender approved beforehand, leaves the nonce alone.
     *
     * Public and virtual only so that a test variant (contracts/test/MisbehavingPermitTokenPaymaster.sol) can add a
     * rule breach in front of it; nothing here is meant to be overridden.
     */
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        public
        virtual
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (FeeTerms memory terms, bytes calldata permit, bool sigFailed) = _verify(userOp, userOpHash);
        uint48 validUntil;
        (context, validUntil) = _charge(userOp.sender, userOpHash, maxCost, terms, permit);
        return (context, _packValidationData(sigFailed, validUntil, terms.validAfter));
    }

    /**
     * Keeps actualGasCost + POST_OP_OVERHEAD_GAS at the fee per gas the operation paid, in tokens, never more than the
     * prefund, and sends the rest of the prefund back to the sender, in both modes the EntryPoint calls it with (it
     * charges gas in both). What the execution did cannot change the charge: the tokens are already here.
     *
     * Only a failed refund can make it revert (a token that blocks the sender between validation and now). The
     * EntryPoint then undoes the execution and calls nothing again, and the whole prefund stays here: the bundle still
     * succeeds, and the sender has paid at most its signed maximum. A postOp gas limit too low for this function has
     * the same outcome, so the service signs a limit that covers the refund.
     */
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        external
        override
    {
        _requireFromEntryPoint();
        (mode); // both modes are charged alike
        ChargeContext memory charge = abi.decode(context, (ChargeContext));
        uint256 gasCost = actualGasCost + POST_OP_OVERHEAD_GAS * actualUserOpFeePerGas;
        uint256 amount = tokenAmount(gasCost, charge.exchangeRate, charge.priceMarkup);
        // The EntryPoint never takes more than the prefund, so neither do we.
        if (amount > charge.prefund) amount = charge.prefund;
        uint256 refund = charge.prefund - amount;
        // Sent even when it is zero, so that postOp costs the same gas whatever the refund: a bundler that estimates
        // at 1 wei per gas (Alto) sees a refund of zero, and would otherwise size a postOp limit the real refund
        // runs out of (AA50). A fee token must therefore take a zero transfer, as USDC and OpenZeppelin's ERC20 do.
        IERC20(charge.feeToken).safeTransfer(charge.sender, refund);
        emit TokenCharged(
            charge.sender,
            charge.feeToken,
            charge.userOpHash,
            amount,
            refund,
            gasCost,
            charge.exchangeRate,
            charge.priceMarkup
        );
    }

    // ---- owner (signers: SignerSet): oracle age, tokens, deposit and stake ----

    function setMaxPriceAge(uint48 newMaxPriceAge) external onlyOwner {
        require(newMaxPriceAge > 0, "PermitTokenPaymasterV07: maxPriceAge is zero");
        emit MaxPriceAgeChanged(maxPriceAge, newMaxPriceAge);
        maxPriceAge = newMaxPriceAge;
    }

    /// The collected fees (a prefund is refunded within the bundle that took it, so none is held between bundles).
    function withdrawToken(IERC20 token, address to, uint256 amount) external onlyOwner {
        require(to != address(0), "PermitTokenPaymasterV07: target is zero");
        token.safeTransfer(to, amount);
        emit TokensWithdrawn(address(token), to, amount);
    }

    /// Adds to this paymaster's EntryPoint deposit, which pays every operation's gas. Anyone may add; only the owner
    /// withdraws.
    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function withdrawTo(address payable target, uint256 amount) external onlyOwner {
        require(target != address(0), "PermitTokenPaymasterV07: target is zero");
        entryPoint.withdrawTo(target, amount);
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    /// ERC-7562 lets only a staked paymaster return a context and touch the token's and the aggregator's storage.
    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable target) external onlyOwner {
        entryPoint.withdrawStake(target);
    }

    /// Without an owner the signer set could never change after a key leak, nor the deposit and fees recovered.
    function renounceOwnership() public view override onlyOwner {
        revert("PermitTokenPaymasterV07: ownership cannot be renounced");
    }

    // ---- internals ----

    function _parse(bytes calldata paymasterAndData)
        private
        pure
        returns (
            FeeTerms memory terms,
            bytes calldata permit,
            bytes calldata signature,
            bytes calldata paymasterSignature
        )
    {
        bytes calldata data;
        (data, paymasterSignature) = PaymasterSignatureV09.split(paymasterAndData);
        require(
            data.length >= TERMS_LENGTH + PERMIT_LENGTH_BYTES,
            "PermitTokenPaymasterV07: paymasterData shorter than the terms and the permit length"
        );
        terms = _terms(data[:TERMS_LENGTH]);
        uint256 permitStart = TERMS_LENGTH + PERMIT_LENGTH_BYTES;
        uint256 permitLength = uint16(bytes2(data[TERMS_LENGTH:permitStart]));
        require(
            permitLength == 0 || permitLength > PERMIT_VALUE_LENGTH,
            "PermitTokenPaymasterV07: a permit is its value and a signature"
        );
        require(data.length >= permitStart + permitLength, "PermitTokenPaymasterV07: permit longer than paymasterData");
        permit = data[permitStart:permitStart + permitLength];
        signature = data[permitStart + permitLength:];
    }

    /// The price source byte and the six terms words.
    function _terms(bytes calldata data) private pure returns (FeeTerms memory terms) {
        terms.priceSource = uint8(data[0]);
        (
            terms.validUntil,
            terms.validAfter,
            terms.feeToken,
            terms.oracleAggregator,
            terms.exchangeRate,
            terms.priceMarkup
        ) = abi.decode(data[1:], (uint48, uint48, address, address, uint256, uint32));
    }

    /// The terms, the permit, and whether a key of the set signed: in the v0.9 suffix over userOpHash, or in
    /// paymasterData over getHash.
    function _verify(PackedUserOperation calldata userOp, bytes32 userOpHash)
        private
        view
        returns (FeeTerms memory terms, bytes calldata permit, bool sigFailed)
    {
        bytes calldata signature;
        bytes calldata paymasterSignature;
        (terms, permit, signature, paymasterSignature) = _parse(userOp.paymasterAndData);
        if (PaymasterSignatureV09.hasSuffix(userOp.paymasterAndData)) {
            require(signature.length == 0, "PermitTokenPaymasterV07: signature in both places");
            require(paymasterSignature.length == SIGNATURE_LENGTH, "PermitTokenPaymasterV07: signature must be 65 bytes");
            sigFailed = !_signedByASigner(userOpHash, paymasterSignature);
        } else {
            require(signature.length == SIGNATURE_LENGTH, "PermitTokenPaymasterV07: signature must be 65 bytes");
            sigFailed = !_signedByASigner(getHash(userOp, terms, keccak256(permit)), signature);
        }
    }

    /// The terms checked, the prefund taken, and what postOp needs; the validity end the price allows.
    function _charge(address sender, bytes32 userOpHash, uint256 maxCost, FeeTerms memory terms, bytes calldata permit)
        private
        returns (bytes memory context, uint48 validUntil)
    {
        require(
            terms.priceMarkup >= MIN_PRICE_MARKUP && terms.priceMarkup <= MAX_PRICE_MARKUP,
            "PermitTokenPaymasterV07: priceMarkup must be 1e6 to 2e6 (millionths)"
        );
        require(terms.feeToken != address(0), "PermitTokenPaymasterV07: fee token is zero");
        uint256 rate;
        (rate, validUntil) = _rateAndExpiry(terms);
        uint256 prefund = tokenAmount(maxCost, rate, terms.priceMarkup);
        _takePrefund(IERC20(terms.feeToken), sender, prefund, permit);
        context = abi.encode(
            ChargeContext({
                sender: sender,
                feeToken: terms.feeToken,
                exchangeRate: rate,
                priceMarkup: terms.priceMarkup,
                prefund: prefund,
                userOpHash: userOpHash
            })
        );
    }

    /// The rate the charge will use, and the validity end: the signed one, cut to the oracle price's expiry if earlier.
    function _rateAndExpiry(FeeTerms memory terms) private view returns (uint256 rate, uint48 validUntil) {
        if (terms.priceSource == PRICE_SOURCE_EXCHANGE_RATE) {
            require(terms.exchangeRate > 0, "PermitTokenPaymasterV07: exchange rate is zero");
            return (terms.exchangeRate, terms.validUntil);
        }
        require(
            terms.priceSource == PRICE_SOURCE_ORACLE,
            "PermitTokenPaymasterV07: priceSource must be 0 (signed rate) or 1 (oracle)"
        );
        uint256 updatedAt;
        (rate, updatedAt) = oracleRate(terms.feeToken, terms.oracleAggregator);
        uint256 priceUntil = updatedAt + maxPriceAge;
        if (priceUntil > type(uint48).max) priceUntil = type(uint48).max;
        // validUntil 0 means no end (EntryPoint semantics), so the price's end always applies then.
        validUntil = terms.validUntil == 0 || priceUntil < terms.validUntil ? uint48(priceUntil) : terms.validUntil;
    }

    /// The permit (when carried and needed), the allowance check, then the transfer of the prefund to this contract.
    function _takePrefund(IERC20 token, address sender, uint256 prefund, bytes calldata permit) private {
        uint256 allowance = token.allowance(sender, address(this));
        if (allowance < prefund && permit.length > 0) {
            uint256 value = uint256(bytes32(permit[:PERMIT_VALUE_LENGTH]));
            try IERC20PermitWithBytes(address(token)).permit(
                sender, address(this), value, PERMIT_DEADLINE, permit[PERMIT_VALUE_LENGTH:]
            ) {} catch {}
            allowance = token.allowance(sender, address(this));
        }
        require(allowance >= prefund, "PermitTokenPaymasterV07: allowance below the maximum charge");
        _pullFrom(token, sender, prefund);
    }

    /**
     * transferFrom with SafeERC20's acceptance (no answer, or true) and the token's reason on failure. Not SafeERC20
     * itself: OpenZeppelin 4's checks this contract's ether balance before every call, and SELFBALANCE is among the
     * opcodes ERC-7562 bans in validation (a staked entity is allowed it only by its latest revision). The allowance
     * read before it already proved there is code at the token.
     */
    function _pullFrom(IERC20 token, address from, uint256 amount) private {
        (bool ok, bytes memory answer) =
            address(token).call(abi.encodeCall(IERC20.transferFrom, (from, address(this), amount)));
        if (!ok) {
            assembly {
                revert(add(answer, 32), mload(answer))
            }
        }
        require(
            answer.length == 0 || abi.decode(answer, (bool)), "PermitTokenPaymasterV07: the token refused the transfer"
        );
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "PermitTokenPaymasterV07: sender not EntryPoint");
    }
}
